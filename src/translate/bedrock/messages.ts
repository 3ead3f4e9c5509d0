/**
 * OpenAI chat messages → Converse `system` + `messages`
 * (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html).
 *
 * - `system` and `developer` messages, wherever they stand, become `system` text blocks, one each.
 * - Content is a list of blocks keyed by kind: `{text}`, `{image}`, `{document}`, `{toolUse}`,
 *   `{toolResult}`. Assistant `tool_calls` → `toolUse` blocks after the text; `tool` messages →
 *   `toolResult` blocks in a user turn. OpenAI tool messages carry no status; a non-OpenAI
 *   `status: "error" | "success"` (or `is_error: true`) on one is passed on, else no status is
 *   sent, since only Nova and Claude models accept the field. An empty tool answer is sent as the text `(empty)` (Converse rejects blank
 *   text blocks).
 * - Consecutive turns of one role are merged (Converse wants user and assistant to alternate;
 *   parallel tool results share one user turn, ahead of any other block).
 * - Converse takes image bytes, not URLs: base64 data URLs → `image.source.bytes`, `s3://` URLs →
 *   `image.source.s3Location`; https URLs are an unsupported parameter (the gateway does not
 *   fetch). Inline files (`file.file_data` data URLs) → `document` blocks.
 * - Empty text blocks and empty turns are left out (Bedrock rejects blank text and empty content).
 * - Past reasoning (the gateway's `thinking_blocks`) → `reasoningContent` blocks ahead of the
 *   assistant's text: signed thinking as `reasoningText` with its signature, redacted thinking as
 *   `redactedContent`. Unsigned thinking, and Gemini's, is left out: Claude refuses reasoning it
 *   cannot verify.
 * - Cache markers (`cache_control`, the gateway's extension) → a `cachePoint` block after the
 *   marked system text or at the end of the marked message
 *   (https://docs.aws.amazon.com/bedrock/latest/userguide/prompt-caching.html).
 */
import type { ChatMessage, ContentPart } from '../../openai-types.ts';
import type { ProviderCall } from '../../plugin-api.ts';
import { unsupportedParam } from '../../providers/params.ts';
import { parseDataUrl, partsOf, textOf, toolCallArguments } from '../../protocol/content.ts';
import { claudeThinkingBlocks } from '../chat/thinking.ts';

export type ConverseBlock = Record<string, unknown>;
export interface ConverseMessage {
  role: 'user' | 'assistant';
  content: ConverseBlock[];
}

export interface TranslatedMessages {
  /** Text blocks, with a cachePoint after a marked one. */
  system: ConverseBlock[];
  messages: ConverseMessage[];
  /** The conversation holds toolUse/toolResult blocks (Converse then needs a toolConfig). */
  hasToolBlocks: boolean;
  /** Names of the tools the assistant called in the conversation. */
  calledTools: string[];
}

const IMAGE_FORMATS: Record<string, string> = { 'image/png': 'png', 'image/jpeg': 'jpeg', 'image/jpg': 'jpeg', 'image/gif': 'gif', 'image/webp': 'webp' };
const IMAGE_EXTENSIONS: Record<string, string> = { png: 'png', jpg: 'jpeg', jpeg: 'jpeg', gif: 'gif', webp: 'webp' };
const DOCUMENT_FORMATS: Record<string, string> = {
  'application/pdf': 'pdf',
  'text/csv': 'csv',
  'application/msword': 'doc',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'docx',
  'application/vnd.ms-excel': 'xls',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 'xlsx',
  'text/html': 'html',
  'text/plain': 'txt',
  'text/markdown': 'md',
};

/** Bedrock's prompt-cache checkpoint: the prefix up to it is cached (5 minutes). */
export const CACHE_POINT: ConverseBlock = Object.freeze({ cachePoint: Object.freeze({ type: 'default' }) });

/** What an empty tool answer is sent as. */
export const EMPTY_TOOL_RESULT = '(empty)';

export function translateMessages(call: ProviderCall): TranslatedMessages {
  const system: ConverseBlock[] = [];
  const messages: ConverseMessage[] = [];
  let hasToolBlocks = false;
  const calledTools = new Set<string>();
  call.request.messages.forEach((m, i) => {
    if (m.role === 'system' || m.role === 'developer') {
      const text = textOf(m.content);
      if (text.trim()) system.push({ text });
      if (m.cache_control && system.length) system.push(CACHE_POINT);
      return;
    }
    const turn = translateMessage(m, i, call);
    if (!turn || turn.content.length === 0) return;
    if (m.cache_control) turn.content.push(CACHE_POINT);
    for (const block of turn.content) {
      if ('toolResult' in block) hasToolBlocks = true;
      if ('toolUse' in block) {
        hasToolBlocks = true;
        const name = (block.toolUse as { name?: unknown }).name;
        if (typeof name === 'string' && name) calledTools.add(name);
      }
    }
    push(messages, turn);
  });
  return { system, messages, hasToolBlocks, calledTools: [...calledTools] };
}

function translateMessage(m: ChatMessage, i: number, call: ProviderCall): ConverseMessage | undefined {
  switch (m.role) {
    case 'user':
      return { role: 'user', content: userBlocks(m.content, `messages[${i}].content`, call) };
    case 'assistant':
      return { role: 'assistant', content: assistantBlocks(m, i) };
    case 'tool':
      return { role: 'user', content: [toolResult(m)] };
    default:
      // `function` (the legacy role) and anything newer.
      unsupportedParam(call, `messages[${i}].role`, `with the value "${m.role}" is not supported`);
      return undefined;
  }
}

function toolResult(m: ChatMessage): ConverseBlock {
  const content = partsOf(m.content)
    .filter((p) => p.type === 'text' && p.text.trim())
    .map((p) => ({ text: (p as { text: string }).text }));
  // Converse rejects blank text, and a tool result needs content: an empty answer is said in words.
  const result: Record<string, unknown> = { toolUseId: m.tool_call_id ?? '', content: content.length ? content : [{ text: EMPTY_TOOL_RESULT }] };
  if (m.status === 'error' || m.is_error === true) result.status = 'error';
  else if (m.status === 'success') result.status = 'success';
  return { toolResult: result };
}

function assistantBlocks(m: ChatMessage, i: number): ConverseBlock[] {
  const blocks: ConverseBlock[] = reasoningBlocks(m);
  const text = textOf(m.content);
  if (text.trim()) blocks.push({ text });
  (m.tool_calls ?? []).forEach((tc, j) => {
    const input = toolCallArguments(tc, i, j);
    blocks.push({ toolUse: { toolUseId: tc.id, name: tc.function?.name, input } });
  });
  return blocks;
}

/** `thinking_blocks` → reasoningContent blocks (Claude-signed or redacted only). */
function reasoningBlocks(m: ChatMessage): ConverseBlock[] {
  const blocks: ConverseBlock[] = [];
  for (const b of claudeThinkingBlocks(m.thinking_blocks)) {
    if (b.type === 'redacted_thinking') blocks.push({ reasoningContent: { redactedContent: b.data } });
    else blocks.push({ reasoningContent: { reasoningText: { text: b.thinking, signature: b.signature } } });
  }
  return blocks;
}

function userBlocks(content: ChatMessage['content'], param: string, call: ProviderCall): ConverseBlock[] {
  const blocks: ConverseBlock[] = [];
  partsOf(content).forEach((part, j) => {
    const block = userBlock(part, typeof content === 'string' ? param : `${param}[${j}]`, call);
    if (block) blocks.push(block);
  });
  return blocks;
}

/** One user content part; undefined when it is empty or dropped as unsupported. */
function userBlock(part: ContentPart, param: string, call: ProviderCall): ConverseBlock | undefined {
  switch (part.type) {
    case 'text':
      return part.text.trim() ? { text: part.text } : undefined;
    case 'image_url':
      return imageBlock(part.image_url?.url ?? '', param, call);
    case 'file': {
      const file = part.file ?? {};
      const data = typeof file.file_data === 'string' ? parseDataUrl(file.file_data) : undefined;
      const format = data && DOCUMENT_FORMATS[data.mediaType.toLowerCase()];
      if (data && format) {
        return { document: { format, name: documentName(typeof file.filename === 'string' ? file.filename : '', format), source: { bytes: data.data } } };
      }
      unsupportedParam(call, param, '(a file part other than an inline base64 document: pdf, csv, doc, docx, xls, xlsx, html, txt, md) is not supported');
      return undefined;
    }
    default:
      unsupportedParam(call, param, `(a ${part.type} part) is not supported`);
      return undefined;
  }
}

function imageBlock(url: string, param: string, call: ProviderCall): ConverseBlock | undefined {
  const data = parseDataUrl(url);
  if (data) {
    const format = IMAGE_FORMATS[data.mediaType.toLowerCase()];
    if (format) return { image: { format, source: { bytes: data.data } } };
    unsupportedParam(call, param, `(an image of type ${data.mediaType}; png, jpeg, gif and webp are) is not supported`);
    return undefined;
  }
  if (url.startsWith('s3://')) {
    const extension = /\.([a-z0-9]+)$/i.exec(new URL(url).pathname)?.[1]?.toLowerCase();
    const format = extension && IMAGE_EXTENSIONS[extension];
    if (format) return { image: { format, source: { s3Location: { uri: url } } } };
    unsupportedParam(call, param, '(an s3:// image URL without a .png, .jpg, .jpeg, .gif or .webp name) is not supported');
    return undefined;
  }
  unsupportedParam(call, param, '(an image URL: Bedrock takes image bytes, so send a base64 data URL, or an s3:// URL) is not supported');
  return undefined;
}

/**
 * Converse document names allow letters, digits, single spaces, hyphens, parentheses and square
 * brackets; anything else becomes a space.
 */
function documentName(filename: string, format: string): string {
  const base = filename.replace(/\.[A-Za-z0-9]+$/, '');
  const name = base
    .replace(/[^A-Za-z0-9\-()[\] ]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return name || `document ${format}`;
}

/** Appends a turn, merging it into the previous one when both have the same role. */
function push(messages: ConverseMessage[], next: ConverseMessage): void {
  const last = messages.at(-1);
  if (!last || last.role !== next.role) {
    messages.push({ role: next.role, content: [...next.content] });
    return;
  }
  const merged = [...last.content, ...next.content];
  // In a user turn, every toolResult goes before any other block.
  last.content = last.role === 'user' ? [...merged.filter(isToolResult), ...merged.filter((b) => !isToolResult(b))] : merged;
}

function isToolResult(block: ConverseBlock): boolean {
  return 'toolResult' in block;
}
