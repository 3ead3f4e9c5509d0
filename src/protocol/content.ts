/** Helpers every provider translation needs for OpenAI message content. */
import type { ChatMessage, ContentPart, ToolCall } from '../openai-types.ts';
import { GatewayError } from '../errors.ts';

/** The text of a message's content: the string itself, or its text parts joined. */
export function textOf(content: ChatMessage['content']): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  let text = '';
  for (const part of content) if (part.type === 'text') text += part.text;
  return text;
}

/** Content as a list of parts (a plain string becomes one text part). */
export function partsOf(content: ChatMessage['content']): ContentPart[] {
  if (typeof content === 'string') return content ? [{ type: 'text', text: content }] : [];
  return Array.isArray(content) ? content : [];
}

/** `data:image/png;base64,AAAA` → { mediaType: 'image/png', data: 'AAAA' }; undefined for other URLs. */
export function parseDataUrl(url: string): { mediaType: string; data: string } | undefined {
  const m = /^data:([^;,]+)(?:;[^,]*)?;base64,(.*)$/s.exec(url);
  return m ? { mediaType: m[1], data: m[2] } : undefined;
}

/** Tool-call arguments (a JSON string) as an object; `{}` for an empty string. Throws on bad JSON. */
export function parseArguments(args: string | undefined): Record<string, unknown> {
  if (!args?.trim()) return {};
  const value: unknown = JSON.parse(args);
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : { value };
}

/**
 * The arguments of the `callIndex`-th tool call of message `messageIndex`, as an object; a
 * string that is not JSON is the client's mistake, answered with a 400 naming the field.
 */
export function toolCallArguments(tc: ToolCall, messageIndex: number, callIndex: number): Record<string, unknown> {
  const param = `messages[${messageIndex}].tool_calls[${callIndex}].function.arguments`;
  try {
    return parseArguments(tc.function?.arguments);
  } catch {
    throw new GatewayError('invalid_request', `Invalid '${param}': not valid JSON.`, { param });
  }
}
