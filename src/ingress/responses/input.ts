/**
 * Responses `input` (and `instructions`) → chat `messages`. The Responses API keeps a
 * conversation as a flat list of items; chat keeps it as messages, one per turn:
 *
 *   instructions                     a leading `system` message (every provider reads `system`;
 *                                    `developer` is OpenAI's newer name for the same thing)
 *   "text" (input as a string)       one `user` message
 *   message user|system|developer    the same role; input_text → text, input_image → image_url
 *                                    (`detail: original` → `high`, chat's largest), input_file →
 *                                    file {file_id, file_data, filename}
 *   message assistant                an assistant message; output_text, input_text and refusal
 *                                    parts → its text (a past refusal is what the model said)
 *   function_call, custom_tool_call  a tool call of the assistant message just before it, or of a
 *                                    new one: a turn's text and its calls are one chat message, and
 *                                    parallel calls (consecutive items) must share it; named for chat
 *                                    from its namespace and name as the tools are (tools.ts), a custom
 *                                    call's `input` as the arguments {"input": "..."}
 *   function_call_output,            a `tool` message (its text parts, as parts); its images and
 *   custom_tool_call_output          files (Codex's view_image) in a `user` message after the
 *                                    run of tool messages, since chat's tool messages hold text
 *                                    only (the pattern OpenAI's own chat models are given)
 *   additional_tools                 its tools are read with the request's (`readInputItems`)
 *   tool_search_call, _output        client tool search (`execution: client`): the call of the
 *                                    `tool_search` function and a `tool` message naming the tools it
 *                                    loaded, whose definitions are read as tools (`readInputItems`)
 *   reasoning                        its `encrypted_content`, when the gateway wrote it (reasoning.ts):
 *                                    the signed thinking blocks, on the assistant message of the
 *                                    same turn (the one just before it, else the next one), so
 *                                    the provider that signed them gets them back; one the gateway
 *                                    did not write is reported dropped (`readInputItems`). Its
 *                                    text and summary are not sent back: chat has no input field for
 *                                    unsigned reasoning that providers agree on (DeepSeek rejects
 *                                    `reasoning_content` in input)
 *   web_search_call                  skipped: the record of a search the provider already ran for
 *                                    an earlier answer (which holds what it found)
 *   past calls of platform tools     dropped and reported (`readInputItems`): file_search_call, server
 *   (file_search_call, ...)          tool search and the like ran on OpenAI's side, and chat has
 *                                    nothing to carry them (a server search's tools are still read);
 *                                    `compaction` is encrypted for OpenAI alone
 *   item_reference                   resolved from the stored responses before this runs (stored.ts);
 *                                    refused here only when the gateway stores none
 *   any other item                   refused: not known to the translation
 *
 * As the Responses API does, a function_call without its output, or an output without its
 * call, is the client's mistake, answered before anything reaches a provider.
 */
import type { Drop } from '../../contract/dropped.ts';
import type { ChatMessage, ContentPart, ThinkingBlock, ToolCall } from '../../openai-types.ts';
import { decodeReasoning } from './reasoning.ts';
import { invalidParam, invalidRequest, unsupportedParam } from './errors.ts';
import { CUSTOM_INPUT, TOOL_SEARCH, chatNameOf, type ToolReading } from './tools.ts';
import type { Callable } from './types.ts';

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Items of tools that ran on OpenAI's platform (or are encrypted for it): past context chat cannot carry. */
const PLATFORM_ITEMS = new Set([
  'file_search_call',
  'code_interpreter_call',
  'image_generation_call',
  'computer_call',
  'computer_call_output',
  'mcp_call',
  'mcp_list_tools',
  'mcp_approval_request',
  'mcp_approval_response',
  'tool_search_call',
  'tool_search_output',
  'local_shell_call',
  'local_shell_call_output',
  'shell_call',
  'shell_call_output',
  'apply_patch_call',
  'apply_patch_call_output',
  'compaction',
]);

/** The input items the reader takes in whole: `additional_tools` (its tools), platform items (dropped, reported). */
export function readInputItems(input: string | unknown[], reading: ToolReading): void {
  if (typeof input === 'string') return;
  input.forEach((item, i) => {
    if (!isObject(item)) return;
    if (item.type === 'additional_tools' || item.type === 'tool_search_output') reading.read(item.tools, `input[${i}].tools`);
    if (typeof item.type === 'string' && PLATFORM_ITEMS.has(item.type) && !isClientSearch(item)) reading.drops.push(platformItemDrop(item.type, `input[${i}]`));
    if (item.type === 'reasoning' && hasEncrypted(item)) {
      const decoded = decodeReasoning(item.encrypted_content);
      if ('error' in decoded) reading.drops.push({ field: `input[${i}].encrypted_content`, what: 'reasoning', reason: `the encrypted reasoning cannot be carried: ${decoded.error}` });
    }
  });
}

/** A reasoning item with encrypted content to read (null and '' say there is none). */
const hasEncrypted = (item: Json): boolean => item.encrypted_content != null && item.encrypted_content !== '';

/** A tool search item the client ran: carried, where the server's are dropped. */
const isClientSearch = (item: Json): boolean => (item.type === 'tool_search_call' || item.type === 'tool_search_output') && item.execution === 'client';

function platformItemDrop(type: string, field: string): Drop {
  const reason =
    type === 'compaction'
      ? "a compaction item's content is encrypted for OpenAI alone"
      : `a past ${type} item belongs to a tool that runs on OpenAI's platform (or answers with items of its own), which the translation to chat has no equivalent for`;
  return { field, what: type, reason };
}

export function inputToMessages(input: string | unknown[], instructions?: string, callables: readonly Callable[] = []): ChatMessage[] {
  const messages: ChatMessage[] = [];
  // An empty `instructions` says nothing (Codex sends "" with its instructions in `input`); some providers refuse an empty system text.
  if (instructions) messages.push({ role: 'system', content: instructions });
  if (typeof input === 'string') {
    messages.push({ role: 'user', content: input });
    return messages;
  }
  const answered = outputsByCall(input);
  const called = new Set<string>();
  /** Signed reasoning read but not yet on an assistant message (it goes on the turn's next one). */
  let thinking: ThinkingBlock[] = [];
  const sign = (m: ChatMessage) => {
    if (thinking.length) m.thinking_blocks = [...(m.thinking_blocks ?? []), ...thinking];
    thinking = [];
  };
  /** Images and files the tool outputs just read returned: one user message once their run ends. */
  let attached: ContentPart[] = [];
  const attach = () => {
    if (attached.length) messages.push({ role: 'user', content: attached });
    attached = [];
  };
  input.forEach((item, i) => {
    const param = `input[${i}]`;
    if (!isObject(item)) throw invalidParam(param, 'expected an object (a message or an item)');
    const type = item.type ?? 'message';
    if (!OUTPUTS.has(type as string)) attach();
    if (PLATFORM_ITEMS.has(type as string) && !isClientSearch(item)) return;
    switch (type) {
      case 'message': {
        const message = messageOf(item, param);
        if (message.role === 'assistant') sign(message);
        messages.push(message);
        return;
      }
      case 'function_call':
      case 'custom_tool_call':
      case 'tool_search_call': {
        const call = toolCallOf(item, param, callables);
        if (!answered.has(call.id)) throw invalidRequest(param, `No tool output found for function call ${call.id}.`);
        called.add(call.id);
        const last = messages.at(-1);
        if (last?.role === 'assistant') (last.tool_calls ??= []).push(call);
        else messages.push({ role: 'assistant', content: null, tool_calls: [call] });
        sign(messages.at(-1)!);
        return;
      }
      case 'function_call_output':
      case 'custom_tool_call_output':
      case 'tool_search_output': {
        const callId = stringField(item, 'call_id', param);
        if (!called.has(callId)) throw invalidRequest(`${param}.call_id`, `No tool call found for function call output with call_id ${callId}.`);
        if (type === 'tool_search_output') {
          messages.push({ role: 'tool', tool_call_id: callId, content: loadedToolsOf(item.tools, callables) });
          return;
        }
        const { content, media } = toolOutputOf(item.output, `${param}.output`);
        messages.push({ role: 'tool', tool_call_id: callId, content });
        if (media.length) attached.push({ type: 'text', text: `The output of tool call ${callId}:` }, ...media);
        return;
      }
      case 'reasoning': {
        const decoded = hasEncrypted(item) ? decodeReasoning(item.encrypted_content) : undefined;
        if (!decoded || 'error' in decoded) return;
        thinking.push(...decoded.blocks);
        // After the turn's text (a signature Gemini puts on the text), it signs what is before it.
        const last = messages.at(-1);
        if (last?.role === 'assistant') sign(last);
        return;
      }
      case 'web_search_call':
      case 'additional_tools':
        return;
      case 'item_reference':
        throw unsupportedParam(
          param,
          `Invalid '${param}': item references name stored items, and this gateway stores none (state.responses.enabled: false); send the items themselves (clients that reference earlier output, such as the Vercel AI SDK, do so when they are told store: false).`,
        );
      default:
        throw unsupportedParam(
          param,
          `Input items of type ${JSON.stringify(type)} are not supported through the gateway's translation: only messages, function, custom and client tool search calls and their outputs, reasoning and additional_tools items are.`,
        );
    }
  });
  attach();
  if (messages.length === 0) throw invalidParam('input', 'expected at least one message');
  return messages;
}

const OUTPUTS = new Set(['function_call_output', 'custom_tool_call_output', 'tool_search_output']);

/** call_id → whether an output for it appears anywhere in the input. */
function outputsByCall(items: unknown[]): Set<string> {
  const out = new Set<string>();
  for (const item of items) if (isObject(item) && OUTPUTS.has(item.type as string) && typeof item.call_id === 'string') out.add(item.call_id);
  return out;
}

function stringField(item: Json, key: string, param: string): string {
  const value = item[key];
  if (typeof value !== 'string' || !value) throw invalidParam(`${param}.${key}`, 'expected a non-empty string');
  return value;
}

/** A past function, custom or tool search call, as the chat call it was. */
function toolCallOf(item: Json, param: string, callables: readonly Callable[]): ToolCall {
  const id = stringField(item, 'call_id', param);
  if (item.type === 'tool_search_call') {
    const args = typeof item.arguments === 'string' ? item.arguments : JSON.stringify(item.arguments ?? {});
    return { id, type: 'function', function: { name: chatNameOf(callables, TOOL_SEARCH), arguments: args } };
  }
  const name = stringField(item, 'name', param);
  if (item.namespace != null && typeof item.namespace !== 'string') throw invalidParam(`${param}.namespace`, 'expected a string');
  const chatName = chatNameOf(callables, name, item.namespace ?? undefined);
  if (item.type === 'custom_tool_call') {
    if (typeof item.input !== 'string') throw invalidParam(`${param}.input`, 'expected a string');
    return { id, type: 'function', function: { name: chatName, arguments: JSON.stringify({ [CUSTOM_INPUT]: item.input }) } };
  }
  if (typeof item.arguments !== 'string') throw invalidParam(`${param}.arguments`, 'expected a string (the arguments as JSON)');
  return { id, type: 'function', function: { name: chatName, arguments: item.arguments } };
}

const ROLES = new Set(['user', 'assistant', 'system', 'developer']);

function messageOf(item: Json, param: string): ChatMessage {
  const role = item.role;
  if (typeof role !== 'string' || !ROLES.has(role)) throw invalidParam(`${param}.role`, "expected one of 'user', 'assistant', 'system', 'developer'");
  const content = item.content;
  if (typeof content !== 'string' && !Array.isArray(content)) throw invalidParam(`${param}.content`, 'expected a string or an array of content parts');
  if (role === 'assistant') return { role: 'assistant', content: typeof content === 'string' ? content : assistantTextOf(content, `${param}.content`) };
  if (typeof content === 'string') return { role: role as ChatMessage['role'], content };
  const parts = content.map((part, j) => partOf(part, `${param}.content[${j}]`));
  if (role !== 'user') {
    // Chat's system and developer messages hold text only.
    const j = parts.findIndex((p) => p.type !== 'text');
    if (j >= 0) throw unsupportedParam(`${param}.content[${j}]`, `Only text is supported in ${role} messages through the gateway's translation to chat.`);
  }
  return { role: role as ChatMessage['role'], content: parts };
}

/** A past assistant turn's parts, as its text. */
function assistantTextOf(content: unknown[], param: string): string {
  let text = '';
  content.forEach((part, j) => {
    const at = `${param}[${j}]`;
    if (!isObject(part)) throw invalidParam(at, 'expected an object');
    if ((part.type === 'output_text' || part.type === 'input_text') && typeof part.text === 'string') text += part.text;
    else if (part.type === 'refusal' && typeof part.refusal === 'string') text += part.refusal;
    else if (part.type === 'output_text' || part.type === 'input_text' || part.type === 'refusal') throw invalidParam(at, `a ${part.type} part needs its text`);
    else throw unsupportedParam(at, `Only output_text and refusal parts are supported in assistant messages through the gateway's translation to chat.`);
  });
  return text;
}

function partOf(part: unknown, param: string): ContentPart {
  if (!isObject(part)) throw invalidParam(param, 'expected an object');
  switch (part.type) {
    case 'input_text':
      if (typeof part.text !== 'string') throw invalidParam(`${param}.text`, 'expected a string');
      return { type: 'text', text: part.text };
    case 'input_image': {
      if (typeof part.image_url !== 'string' || !part.image_url) {
        if (part.file_id != null) throw unsupportedParam(`${param}.file_id`, 'Images by file_id are not supported through the gateway: send the image as image_url (a URL or a data: URL).');
        throw invalidParam(`${param}.image_url`, 'expected a URL or a data: URL');
      }
      const detail = part.detail === 'original' ? 'high' : part.detail;
      if (detail !== undefined && detail !== 'auto' && detail !== 'low' && detail !== 'high') throw invalidParam(`${param}.detail`, "expected one of 'auto', 'low', 'high', 'original'");
      return { type: 'image_url', image_url: detail ? { url: part.image_url, detail } : { url: part.image_url } };
    }
    case 'input_file': {
      if (part.file_url != null) throw unsupportedParam(`${param}.file_url`, 'Files by URL are not supported through the gateway: send file_data (base64) or a file_id.');
      const file: Record<string, unknown> = {};
      for (const key of ['file_id', 'file_data', 'filename'] as const) {
        if (part[key] == null) continue;
        if (typeof part[key] !== 'string') throw invalidParam(`${param}.${key}`, 'expected a string');
        file[key] = part[key];
      }
      if (file.file_id === undefined && file.file_data === undefined) throw invalidParam(param, 'an input_file needs file_data or a file_id');
      return { type: 'file', file };
    }
    default:
      throw invalidParam(`${param}.type`, "expected one of 'input_text', 'input_image', 'input_file'");
  }
}

/** What a client tool search answered, for the model: the chat names of the tools it loaded. */
function loadedToolsOf(tools: unknown, callables: readonly Callable[]): string {
  const names: string[] = [];
  for (const tool of Array.isArray(tools) ? tools : []) {
    if (!isObject(tool) || typeof tool.name !== 'string') continue;
    if (tool.type === 'namespace' && Array.isArray(tool.tools)) {
      for (const inner of tool.tools) if (isObject(inner) && typeof inner.name === 'string') names.push(chatNameOf(callables, inner.name, tool.name));
    } else if (tool.type === 'function' || tool.type === 'custom') names.push(chatNameOf(callables, tool.name));
  }
  return names.length ? `Tools loaded, now callable: ${names.join(', ')}.` : 'No tools matched.';
}

/** A tool output's `output`: a string, or parts; chat's tool messages carry the text, the rest (`media`) goes after them. */
function toolOutputOf(output: unknown, param: string): { content: string | ContentPart[]; media: ContentPart[] } {
  if (typeof output === 'string') return { content: output, media: [] };
  if (!Array.isArray(output)) throw invalidParam(param, 'expected a string or an array of content parts');
  const parts = output.map((part, j) => partOf(part, `${param}[${j}]`));
  const text = parts.filter((p) => p.type === 'text');
  const media = parts.filter((p) => p.type !== 'text');
  // A tool message says something, even when all it returned is an image.
  const content = text.length || !media.length ? text : 'The output is in the next message.';
  return { content, media };
}
