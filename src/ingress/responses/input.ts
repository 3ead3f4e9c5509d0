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
 *   function_call                    a tool call of the assistant message just before it, or of a
 *                                    new one: a turn's text and its calls are one chat message, and
 *                                    parallel calls (consecutive items) must share it
 *   function_call_output             a `tool` message (its text parts, as parts)
 *   reasoning                        dropped: chat has no input field for a past turn's reasoning
 *                                    that providers agree on (DeepSeek rejects `reasoning_content`
 *                                    in input, Anthropic needs signatures chat never carries), and
 *                                    `encrypted_content` is only ever OpenAI's own to read
 *   item_reference                   resolved from the stored responses before this runs (stored.ts);
 *                                    refused here only when the gateway stores none
 *   any other item (hosted tools)    refused: only function tools cross the translation
 *
 * As the Responses API does, a function_call without its output, or an output without its
 * call, is the client's mistake, answered before anything reaches a provider.
 */
import type { ChatMessage, ContentPart, ToolCall } from '../../openai-types.ts';
import { invalidParam, invalidRequest, unsupportedParam } from './errors.ts';

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

export function inputToMessages(input: string | unknown[], instructions?: string): ChatMessage[] {
  const messages: ChatMessage[] = [];
  if (instructions !== undefined) messages.push({ role: 'system', content: instructions });
  if (typeof input === 'string') {
    messages.push({ role: 'user', content: input });
    return messages;
  }
  const answered = outputsByCall(input);
  const called = new Set<string>();
  input.forEach((item, i) => {
    const param = `input[${i}]`;
    if (!isObject(item)) throw invalidParam(param, 'expected an object (a message or an item)');
    const type = item.type ?? 'message';
    switch (type) {
      case 'message':
        messages.push(messageOf(item, param));
        return;
      case 'function_call': {
        const call = toolCallOf(item, param);
        if (!answered.has(call.id)) throw invalidRequest(param, `No tool output found for function call ${call.id}.`);
        called.add(call.id);
        const last = messages.at(-1);
        if (last?.role === 'assistant') (last.tool_calls ??= []).push(call);
        else messages.push({ role: 'assistant', content: null, tool_calls: [call] });
        return;
      }
      case 'function_call_output': {
        const callId = stringField(item, 'call_id', param);
        if (!called.has(callId)) throw invalidRequest(`${param}.call_id`, `No tool call found for function call output with call_id ${callId}.`);
        messages.push({ role: 'tool', tool_call_id: callId, content: toolOutputOf(item.output, `${param}.output`) });
        return;
      }
      case 'reasoning':
        return;
      case 'item_reference':
        throw unsupportedParam(
          param,
          `Invalid '${param}': item references name stored items, and this gateway stores none (state.responses.enabled: false); send the items themselves (clients that reference earlier output, such as the Vercel AI SDK, do so when they are told store: false).`,
        );
      default:
        throw unsupportedParam(
          param,
          `Input items of type ${JSON.stringify(type)} are not supported through the gateway's translation: only messages, function_call, function_call_output and reasoning items are.`,
        );
    }
  });
  if (messages.length === 0) throw invalidParam('input', 'expected at least one message');
  return messages;
}

/** call_id → whether an output for it appears anywhere in the input. */
function outputsByCall(items: unknown[]): Set<string> {
  const out = new Set<string>();
  for (const item of items) if (isObject(item) && item.type === 'function_call_output' && typeof item.call_id === 'string') out.add(item.call_id);
  return out;
}

function stringField(item: Json, key: string, param: string): string {
  const value = item[key];
  if (typeof value !== 'string' || !value) throw invalidParam(`${param}.${key}`, 'expected a non-empty string');
  return value;
}

function toolCallOf(item: Json, param: string): ToolCall {
  const id = stringField(item, 'call_id', param);
  const name = stringField(item, 'name', param);
  if (typeof item.arguments !== 'string') throw invalidParam(`${param}.arguments`, 'expected a string (the arguments as JSON)');
  return { id, type: 'function', function: { name, arguments: item.arguments } };
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

/** A function_call_output's `output`: a string, or text parts (chat's tool messages carry text only). */
function toolOutputOf(output: unknown, param: string): string | ContentPart[] {
  if (typeof output === 'string') return output;
  if (!Array.isArray(output)) throw invalidParam(param, 'expected a string or an array of content parts');
  return output.map((part, j) => {
    const converted = partOf(part, `${param}[${j}]`);
    if (converted.type !== 'text') throw unsupportedParam(`${param}[${j}]`, "Only text is supported in function_call_output through the gateway's translation to chat.");
    return converted;
  });
}
