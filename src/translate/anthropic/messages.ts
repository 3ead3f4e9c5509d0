/**
 * OpenAI chat messages → Anthropic `system` + `messages` (https://docs.anthropic.com/en/api/messages).
 *
 * - `system` and `developer` messages, wherever they stand, are hoisted into the top-level
 *   `system` (joined by a blank line): the Messages API has no system role inside `messages`.
 * - Assistant `tool_calls` become `tool_use` blocks after the assistant's text; `tool` messages
 *   become `tool_result` blocks in a user turn.
 * - Consecutive turns of one role are merged into one turn (the API wants user and assistant to
 *   alternate; parallel tool results must share one user turn, ahead of any other block).
 * - Images: base64 data URLs → base64 image sources, other URLs → url sources; an inline PDF
 *   (`file.file_data`) → a document block. Audio and file ids are unsupported parameters.
 * - Turns with nothing in them are left out (the API rejects empty content and empty text blocks).
 * - Past reasoning (the gateway's `thinking_blocks`) → `thinking` blocks with their signature and
 *   `redacted_thinking` blocks, ahead of the assistant's text; unsigned thinking and Gemini's are
 *   left out (Anthropic refuses what it cannot verify).
 * - Cache markers (`cache_control` on a message, the gateway's extension) → `cache_control` on the
 *   last block of that message (a marked system message makes `system` a list of text blocks).
 */
import type { ChatMessage, ContentPart } from '../../openai-types.ts';
import type { ProviderCall } from '../../plugin-api.ts';
import { unsupportedParam } from '../../providers/params.ts';
import { parseDataUrl, partsOf, textOf, toolCallArguments } from '../../protocol/content.ts';
import { claudeThinkingBlocks } from '../chat/thinking.ts';

export type AnthropicBlock = Record<string, unknown> & { type: string };
export interface AnthropicMessage {
  role: 'user' | 'assistant';
  content: string | AnthropicBlock[];
}

export interface TranslatedMessages {
  /** The system prompt: one string, or text blocks when one of them carries a cache marker. */
  system?: string | AnthropicBlock[];
  messages: AnthropicMessage[];
}

export function translateMessages(call: ProviderCall): TranslatedMessages {
  const system: AnthropicBlock[] = [];
  const messages: AnthropicMessage[] = [];
  call.request.messages.forEach((m, i) => {
    if (m.role === 'system' || m.role === 'developer') {
      const text = textOf(m.content);
      if (text) system.push(m.cache_control ? { type: 'text', text, cache_control: m.cache_control } : { type: 'text', text });
      return;
    }
    const turn = translateMessage(m, i, call);
    if (!turn || isEmpty(turn.content)) return;
    if (m.cache_control) {
      const blocks = blocksOf(turn.content);
      blocks[blocks.length - 1] = { ...blocks[blocks.length - 1], cache_control: m.cache_control };
      turn.content = blocks;
    }
    push(messages, turn);
  });
  if (!system.length) return { messages };
  if (system.some((b) => b.cache_control)) return { system, messages };
  return { system: system.map((b) => b.text).join('\n\n'), messages };
}

function translateMessage(m: ChatMessage, i: number, call: ProviderCall): AnthropicMessage | undefined {
  switch (m.role) {
    case 'user':
      if (typeof m.content === 'string') return { role: 'user', content: m.content };
      return { role: 'user', content: userBlocks(m.content ?? [], `messages[${i}].content`, call) };
    case 'assistant':
      return { role: 'assistant', content: assistantBlocks(m, i) };
    case 'tool':
      return { role: 'user', content: [{ type: 'tool_result', tool_use_id: m.tool_call_id ?? '', content: textOf(m.content) }] };
    default:
      // `function` (the legacy role) and anything newer.
      unsupportedParam(call, `messages[${i}].role`, `with the value "${m.role}" is not supported`);
      return undefined;
  }
}

function assistantBlocks(m: ChatMessage, i: number): AnthropicBlock[] {
  const blocks: AnthropicBlock[] = claudeThinkingBlocks(m.thinking_blocks).map((b) => ({ ...b }));
  const text = textOf(m.content);
  if (text) blocks.push({ type: 'text', text });
  (m.tool_calls ?? []).forEach((tc, j) => {
    const input = toolCallArguments(tc, i, j);
    blocks.push({ type: 'tool_use', id: tc.id, name: tc.function?.name, input });
  });
  return blocks;
}

function userBlocks(parts: ContentPart[], param: string, call: ProviderCall): AnthropicBlock[] {
  const blocks: AnthropicBlock[] = [];
  partsOf(parts).forEach((part, j) => {
    const block = userBlock(part, `${param}[${j}]`, call);
    if (block) blocks.push(block);
  });
  return blocks;
}

/** One user content part; undefined when it is empty or dropped as unsupported. */
function userBlock(part: ContentPart, param: string, call: ProviderCall): AnthropicBlock | undefined {
  switch (part.type) {
    case 'text':
      return part.text ? { type: 'text', text: part.text } : undefined;
    case 'image_url': {
      const url = part.image_url?.url ?? '';
      const data = parseDataUrl(url);
      if (data) return { type: 'image', source: { type: 'base64', media_type: data.mediaType, data: data.data } };
      if (url.startsWith('data:')) {
        unsupportedParam(call, param, '(an image data URL that is not base64) is not supported');
        return undefined;
      }
      return { type: 'image', source: { type: 'url', url } };
    }
    case 'file': {
      // PDFs sent inline (`file_data` as a base64 data URL) are Anthropic document blocks.
      const data = typeof part.file?.file_data === 'string' ? parseDataUrl(part.file.file_data) : undefined;
      if (data?.mediaType === 'application/pdf') {
        return { type: 'document', source: { type: 'base64', media_type: data.mediaType, data: data.data } };
      }
      unsupportedParam(call, param, '(a file part other than an inline base64 PDF) is not supported');
      return undefined;
    }
    default:
      unsupportedParam(call, param, `(a ${part.type} part) is not supported`);
      return undefined;
  }
}

function isEmpty(content: string | AnthropicBlock[]): boolean {
  return content.length === 0;
}

/** Appends a turn, merging it into the previous one when both have the same role. */
function push(messages: AnthropicMessage[], next: AnthropicMessage): void {
  const last = messages.at(-1);
  if (!last || last.role !== next.role) {
    messages.push(next);
    return;
  }
  const merged = [...blocksOf(last.content), ...blocksOf(next.content)];
  // In a user turn the API wants every tool_result before any other block.
  last.content = last.role === 'user' ? [...merged.filter(isToolResult), ...merged.filter((b) => !isToolResult(b))] : merged;
}

function isToolResult(block: AnthropicBlock): boolean {
  return block.type === 'tool_result';
}

function blocksOf(content: string | AnthropicBlock[]): AnthropicBlock[] {
  return typeof content === 'string' ? [{ type: 'text', text: content }] : content;
}
