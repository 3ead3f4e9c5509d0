/**
 * Prompt and completion in the shape of the GenAI conventions' opt-in `gen_ai.input.messages`
 * and `gen_ai.output.messages` (docs/gen-ai/gen-ai-input-messages.json and
 * gen-ai-output-messages.json: a role and a list of typed parts), serialised as JSON strings
 * because span attributes hold no objects. Used only when `tracing.captureContent: true`.
 * Inline images and audio are named, not copied: a span is no place for megabytes of base64.
 */
import type { ChatCompletion, ChatMessage, ContentPart } from '../openai-types.ts';

type Part = Record<string, unknown>;

export function inputMessages(messages: unknown): string | undefined {
  if (!Array.isArray(messages)) return undefined;
  return JSON.stringify(messages.map((m: ChatMessage) => ({ role: m?.role, parts: partsOf(m) })));
}

function partsOf(m: ChatMessage): Part[] {
  if (!m || typeof m !== 'object') return [];
  if (m.role === 'tool') return [{ type: 'tool_call_response', id: m.tool_call_id, result: textOf(m.content) }];
  const parts: Part[] = [];
  if (typeof m.content === 'string') parts.push({ type: 'text', content: m.content });
  else if (Array.isArray(m.content)) for (const p of m.content) parts.push(contentPart(p));
  for (const call of m.tool_calls ?? []) parts.push({ type: 'tool_call', id: call.id, name: call.function?.name, arguments: parseArguments(call.function?.arguments) });
  return parts;
}

function contentPart(p: ContentPart): Part {
  switch (p?.type) {
    case 'text':
      return { type: 'text', content: p.text };
    case 'refusal':
      return { type: 'text', content: p.refusal };
    case 'image_url': {
      const url = p.image_url?.url;
      return typeof url === 'string' && !url.startsWith('data:') ? { type: 'uri', modality: 'image', uri: url } : { type: 'blob', modality: 'image' };
    }
    case 'input_audio':
      return { type: 'blob', modality: 'audio' };
    default:
      return { type: String(p?.type) };
  }
}

function textOf(content: ChatMessage['content']): string | undefined {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((p) => (p.type === 'text' ? p.text : '')).join('');
  return undefined;
}

function parseArguments(text: string | undefined): unknown {
  if (typeof text !== 'string') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** What a stream delivered, gathered chunk by chunk: text per choice and each choice's finish reason. */
export interface StreamedOutput {
  text: string[];
  finishReasons: string[];
}

export function outputMessages(completion: ChatCompletion | undefined, streamed: StreamedOutput | undefined): string | undefined {
  if (completion) {
    return JSON.stringify(
      completion.choices.map((c) => {
        const parts: Part[] = [];
        if (typeof c.message?.content === 'string') parts.push({ type: 'text', content: c.message.content });
        for (const call of c.message?.tool_calls ?? []) parts.push({ type: 'tool_call', id: call.id, name: call.function?.name, arguments: parseArguments(call.function?.arguments) });
        return { role: 'assistant', parts, finish_reason: c.finish_reason ?? undefined };
      }),
    );
  }
  if (streamed) {
    const count = Math.max(streamed.text.length, streamed.finishReasons.length);
    const messages = [];
    for (let i = 0; i < count; i++) messages.push({ role: 'assistant', parts: streamed.text[i] ? [{ type: 'text', content: streamed.text[i] }] : [], finish_reason: streamed.finishReasons[i] });
    return JSON.stringify(messages);
  }
  return undefined;
}
