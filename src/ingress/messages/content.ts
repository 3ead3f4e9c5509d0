/**
 * Messages API `system` + `messages` → chat messages (https://docs.anthropic.com/en/api/messages).
 *
 * - `system` (a string or text blocks, joined by a blank line) → one leading system message.
 *   `role: "system"` turns inside `messages` (newer API versions) stay where they are.
 * - User turns: `text` → text parts; `image` (base64 → a data URL, url → the URL) → image_url parts;
 *   `document` (base64 PDF → a chat `file` part with `file_data`; plain text and content sources →
 *   text and image parts); `tool_result` → one `tool` message each, ahead of the turn's other
 *   parts (chat wants tool messages right after the assistant's tool_calls, as Anthropic wants
 *   tool_result blocks first). A tool result's images go into the user message that follows, since
 *   a chat tool message holds only text; `is_error` is said in the text ("Error: ...").
 * - Assistant turns: text blocks joined into `content` (joined as they stand, the way the anthropic
 *   plugin joins them the other way); `tool_use` → `tool_calls` with `JSON.stringify(input)`.
 * - `thinking` and `redacted_thinking` blocks of assistant turns → the assistant message's
 *   `thinking_blocks` (the gateway's extension, signatures and redacted data kept: thinking.ts), for
 *   the providers that take them back (Bedrock, Gemini, Anthropic); OpenAI-style targets get none.
 *   In a user turn they mean nothing and are left out.
 * - `cache_control` marks the chat message its block becomes (cache-control.ts); `citations`
 *   settings are dropped: chat answers carry no citations.
 * - Past web searches (a `web_search` server_tool_use and its web_search_tool_result) in an
 *   assistant turn are skipped: the record of a search already run (web-search.ts).
 * - Other server-tool blocks, Files API sources (`file_id`), PDFs by URL and search results are
 *   Anthropic-only (NativeOnly); any other block type is a 400.
 */
import type { CacheControl, ChatMessage, ContentPart, ThinkingBlock, ToolCall } from '../../openai-types.ts';
import { cacheControlOf } from './cache-control.ts';
import { type Json, type NativeOnly, arrayAt, invalid, isObject, objectAt, stringAt } from './fields.ts';
import { thinkingBlockOf } from './thinking.ts';
import { isPastSearchBlock } from './web-search.ts';

/** Block types produced and consumed by Anthropic's server tools (web search, code execution, ...). */
const SERVER_TOOL_BLOCK = /^(server_tool_use|.*_tool_result|container_upload|mcp_tool_use)$/;

export function chatMessagesOf(system: unknown, messages: unknown, nativeOnly: NativeOnly): ChatMessage[] {
  const out: ChatMessage[] = [];
  if (system !== undefined && system !== null) {
    const text = systemText(system, 'system');
    if (text) out.push(marked({ role: 'system', content: text }, systemCache(system, 'system')));
  }
  const turns = arrayAt(messages, 'messages');
  if (!turns.length) throw invalid('messages', 'at least one message is required');
  turns.forEach((turn, i) => {
    out.push(...turnMessages(objectAt(turn, `messages[${i}]`), `messages[${i}]`, nativeOnly));
  });
  return out;
}

function turnMessages(turn: Json, param: string, nativeOnly: NativeOnly): ChatMessage[] {
  const content = turn.content;
  if (typeof content !== 'string' && !Array.isArray(content)) throw invalid(`${param}.content`, 'expected a string or an array of content blocks');
  switch (turn.role) {
    case 'user':
      return userMessages(content, `${param}.content`, nativeOnly);
    case 'assistant': {
      const message = assistantMessage(content, `${param}.content`, nativeOnly);
      return message ? [message] : [];
    }
    case 'system': {
      const text = systemText(content, `${param}.content`);
      return text ? [marked({ role: 'system', content: text }, systemCache(content, `${param}.content`))] : [];
    }
    default:
      throw invalid(`${param}.role`, 'expected "user" or "assistant"');
  }
}

function systemText(system: unknown, param: string): string {
  if (typeof system === 'string') return system;
  return arrayAt(system, param)
    .map((block, j) => textOfBlock(block, `${param}[${j}]`))
    .join('\n\n');
}

/** The last cache marker on a system prompt's blocks (the whole prompt is one chat message). */
function systemCache(system: unknown, param: string): CacheControl | undefined {
  if (!Array.isArray(system)) return undefined;
  let control: CacheControl | undefined;
  system.forEach((block, j) => {
    control = cacheControlOf(objectAt(block, `${param}[${j}]`), `${param}[${j}]`) ?? control;
  });
  return control;
}

/** The message with its cache marker, when it has one. */
function marked(message: ChatMessage, control: CacheControl | undefined): ChatMessage {
  if (control) message.cache_control = control;
  return message;
}

function textOfBlock(block: unknown, param: string): string {
  const b = objectAt(block, param);
  if (b.type !== 'text') throw invalid(`${param}.type`, 'expected "text"');
  return stringAt(b.text, `${param}.text`);
}

// ---------------------------------------------------------------- user turns

function userMessages(content: string | unknown[], param: string, nativeOnly: NativeOnly): ChatMessage[] {
  if (typeof content === 'string') return [{ role: 'user', content }];
  const tools: ChatMessage[] = [];
  /** Images and PDFs returned by tools, shown to the model in the user message after the tool messages. */
  const attachments: ContentPart[] = [];
  const parts: ContentPart[] = [];
  let partsCache: CacheControl | undefined;
  content.forEach((raw, j) => {
    const at = `${param}[${j}]`;
    const block = objectAt(raw, at);
    if (block.type === 'tool_result') {
      const result = toolResult(block, at, nativeOnly);
      tools.push(marked(result.message, cacheControlOf(block, at)));
      attachments.push(...result.attachments);
    } else {
      parts.push(...userParts(block, at, nativeOnly));
      partsCache = cacheControlOf(block, at) ?? partsCache;
    }
  });
  const rest = [...attachments, ...parts];
  // A turn that held only tool results needs no user message of its own.
  if (tools.length && !rest.length) return tools;
  // A marker on a text block after tool results still ends the prefix after the whole turn.
  return [...tools, marked({ role: 'user', content: rest }, partsCache)];
}

/** One user content block as chat parts (none for dropped and native-only blocks). */
function userParts(block: Json, param: string, nativeOnly: NativeOnly): ContentPart[] {
  switch (block.type) {
    case 'text':
      return [{ type: 'text', text: stringAt(block.text, `${param}.text`) }];
    case 'image': {
      const image = imagePart(block, param, nativeOnly);
      return image ? [image] : [];
    }
    case 'document':
      return documentParts(block, param, nativeOnly);
    case 'thinking':
    case 'redacted_thinking':
      return [];
    case 'tool_use':
      throw invalid(`${param}.type`, 'tool_use blocks belong in assistant turns');
    case 'search_result':
      nativeOnly.add(param, 'a search_result block');
      return [];
    default:
      return unknownBlock(block, param, nativeOnly);
  }
}

function imagePart(block: Json, param: string, nativeOnly: NativeOnly): ContentPart | undefined {
  const source = objectAt(block.source, `${param}.source`);
  switch (source.type) {
    case 'base64': {
      const mediaType = stringAt(source.media_type, `${param}.source.media_type`);
      const data = stringAt(source.data, `${param}.source.data`);
      return { type: 'image_url', image_url: { url: `data:${mediaType};base64,${data}` } };
    }
    case 'url':
      return { type: 'image_url', image_url: { url: stringAt(source.url, `${param}.source.url`) } };
    case 'file':
      nativeOnly.add(`${param}.source`, 'an image from the Files API');
      return undefined;
    default:
      throw invalid(`${param}.source.type`, 'expected "base64", "url" or "file"');
  }
}

/**
 * A PDF sent inline becomes a chat `file` part (OpenAI's shape: `file_data` as a data URL, with a
 * filename, which OpenAI requires alongside it); a plain-text document becomes its text.
 */
function documentParts(block: Json, param: string, nativeOnly: NativeOnly): ContentPart[] {
  const source = objectAt(block.source, `${param}.source`);
  switch (source.type) {
    case 'base64': {
      const mediaType = stringAt(source.media_type, `${param}.source.media_type`);
      if (mediaType !== 'application/pdf') throw invalid(`${param}.source.media_type`, 'expected "application/pdf"');
      const data = stringAt(source.data, `${param}.source.data`);
      const filename = typeof block.title === 'string' && block.title ? block.title : 'document.pdf';
      return [{ type: 'file', file: { filename, file_data: `data:application/pdf;base64,${data}` } }];
    }
    case 'text':
      return [{ type: 'text', text: stringAt(source.data, `${param}.source.data`) }];
    case 'content': {
      if (typeof source.content === 'string') return [{ type: 'text', text: source.content }];
      return arrayAt(source.content, `${param}.source.content`).flatMap((inner, k) => {
        const at = `${param}.source.content[${k}]`;
        const b = objectAt(inner, at);
        if (b.type !== 'text' && b.type !== 'image') throw invalid(`${at}.type`, 'expected "text" or "image"');
        return userParts(b, at, nativeOnly);
      });
    }
    case 'url':
      nativeOnly.add(`${param}.source`, 'a PDF by URL');
      return [];
    case 'file':
      nativeOnly.add(`${param}.source`, 'a document from the Files API');
      return [];
    default:
      throw invalid(`${param}.source.type`, 'expected "base64", "text", "content", "url" or "file"');
  }
}

/** A `tool_result` → a `tool` message (its text) and the images or PDFs it returned. */
function toolResult(block: Json, param: string, nativeOnly: NativeOnly): { message: ChatMessage; attachments: ContentPart[] } {
  const id = stringAt(block.tool_use_id, `${param}.tool_use_id`);
  const texts: string[] = [];
  const attachments: ContentPart[] = [];
  const content = block.content;
  if (typeof content === 'string') texts.push(content);
  else if (content !== undefined && content !== null) {
    arrayAt(content, `${param}.content`).forEach((raw, k) => {
      const at = `${param}.content[${k}]`;
      for (const part of userParts(objectAt(raw, at), at, nativeOnly)) {
        if (part.type === 'text') texts.push(part.text);
        else attachments.push(part);
      }
    });
  }
  let text = texts.join('\n');
  // Chat has no error flag on a tool message: the model reads it in the text.
  if (block.is_error === true) text = text ? `Error: ${text}` : 'Error';
  return { message: { role: 'tool', tool_call_id: id, content: text }, attachments };
}

// ---------------------------------------------------------------- assistant turns

/** The assistant turn as one chat message; undefined when nothing is left (only thinking). */
function assistantMessage(content: string | unknown[], param: string, nativeOnly: NativeOnly): ChatMessage | undefined {
  if (typeof content === 'string') return { role: 'assistant', content };
  let text = '';
  const calls: ToolCall[] = [];
  const thinking: ThinkingBlock[] = [];
  let control: CacheControl | undefined;
  content.forEach((raw, j) => {
    const at = `${param}[${j}]`;
    const block = objectAt(raw, at);
    control = cacheControlOf(block, at) ?? control;
    switch (block.type) {
      case 'text':
        text += stringAt(block.text, `${at}.text`);
        return;
      case 'tool_use': {
        const input = block.input ?? {};
        if (!isObject(input)) throw invalid(`${at}.input`, 'expected an object');
        calls.push({ id: stringAt(block.id, `${at}.id`), type: 'function', function: { name: stringAt(block.name, `${at}.name`), arguments: JSON.stringify(input) } });
        return;
      }
      case 'thinking':
      case 'redacted_thinking':
        thinking.push(thinkingBlockOf(block, at));
        return;
      default:
        if (isPastSearchBlock(block)) return;
        if (typeof block.type === 'string' && SERVER_TOOL_BLOCK.test(block.type)) {
          nativeOnly.add(at, `a ${block.type} block`);
          return;
        }
        throw invalid(`${at}.type`, `a ${JSON.stringify(block.type)} block cannot appear in an assistant turn`);
    }
  });
  // A turn of thinking alone (no answer) has nothing a chat provider could take back.
  if (!text && !calls.length) return undefined;
  const message: ChatMessage = { role: 'assistant', content: text || null };
  if (calls.length) message.tool_calls = calls;
  if (thinking.length) message.thinking_blocks = thinking;
  return marked(message, control);
}

function unknownBlock(block: Json, param: string, nativeOnly: NativeOnly): ContentPart[] {
  if (typeof block.type === 'string' && SERVER_TOOL_BLOCK.test(block.type)) {
    nativeOnly.add(param, `a ${block.type} block`);
    return [];
  }
  throw invalid(`${param}.type`, `unknown content block type ${JSON.stringify(block.type)}`);
}
