/**
 * Gemini `systemInstruction` + `contents` → chat messages, the inverse of the gemini provider's
 * src/translate/gemini/contents.ts:
 *
 * - systemInstruction's text parts → one `system` message.
 * - A `user` turn (or one without a role) → its `functionResponse` parts as `tool` messages
 *   first (chat wants results right after the call), then the rest (with media a function
 *   returned in `functionResponse.parts`) as one `user` message:
 *   text; `inlineData` images as data URLs, audio as `input_audio`, other media as a `file`
 *   part; `fileData` images as URLs. A `fileData` that is not an image has no chat form.
 * - A `model` turn → one `assistant` message: its text (thought summaries left out: they are the
 *   model's own notes, Gemini reads only their signatures) and a tool call per `functionCall`.
 * - Call ids: a `functionCall.id` is kept as the tool call id (Gemini CLI sends its own); without
 *   one an id is made from the turn and part position. A `functionResponse` answers the call with
 *   its `id`, else the earliest unanswered call of its `name`.
 * - A functionCall's `thoughtSignature` rides as `extra_content.google.thought_signature` (where
 *   the gemini provider and Google's OpenAI endpoint keep it), so it survives a translated hop.
 */
import type { ChatMessage, ContentPart, TextPart, ToolCall } from '../../openai-types.ts';
import type { Drops } from './drops.ts';
import { arrayAt, invalid, isObject, type Json, objectAt, stringAt } from './fields.ts';

/** Audio formats chat's `input_audio` names (`audio/wav` → wav). */
const AUDIO_FORMATS: Record<string, string> = { 'audio/wav': 'wav', 'audio/x-wav': 'wav', 'audio/mp3': 'mp3', 'audio/mpeg': 'mp3' };

export function chatMessagesOf(systemInstruction: unknown, contents: unknown, drops: Drops): ChatMessage[] {
  const messages: ChatMessage[] = [];
  if (systemInstruction != null) {
    const text = textOfInstruction(objectAt(systemInstruction, 'systemInstruction'));
    if (text) messages.push({ role: 'system', content: text });
  }
  const calls = new CallBook();
  arrayAt(contents, 'contents').forEach((raw, i) => {
    const turn = objectAt(raw, `contents[${i}]`);
    const role = turn.role == null || turn.role === '' ? 'user' : stringAt(turn.role, `contents[${i}].role`);
    const parts = arrayAt(turn.parts ?? [], `contents[${i}].parts`).map((p, j) => objectAt(p, `contents[${i}].parts[${j}]`));
    if (role === 'model') messages.push(...modelTurn(parts, i, calls, drops));
    else if (role === 'user' || role === 'function') messages.push(...userTurn(parts, i, calls, drops));
    else throw invalid(`contents[${i}].role`, 'expected "user" or "model"');
  });
  return messages;
}

function textOfInstruction(instruction: Json): string {
  const parts = arrayAt(instruction.parts ?? [], 'systemInstruction.parts');
  return parts
    .map((p, j) => objectAt(p, `systemInstruction.parts[${j}]`))
    .filter((p) => typeof p.text === 'string')
    .map((p) => p.text)
    .join('\n');
}

/** The calls of the conversation so far, to give each functionResponse the id of the call it answers. */
class CallBook {
  readonly #open: Array<{ id: string; name: string }> = [];

  opened(id: string, name: string): void {
    this.#open.push({ id, name });
  }

  /** The call a response answers: by id when it has one, else the earliest open one of that name. */
  answered(id: string | undefined, name: string): string | undefined {
    const i = id ? this.#open.findIndex((c) => c.id === id) : this.#open.findIndex((c) => c.name === name);
    if (i < 0) return id;
    return this.#open.splice(i, 1)[0].id;
  }
}

function modelTurn(parts: Json[], i: number, calls: CallBook, drops: Drops): ChatMessage[] {
  let text = '';
  const toolCalls: ToolCall[] = [];
  parts.forEach((p, j) => {
    const at = `contents[${i}].parts[${j}]`;
    if (p.functionCall != null) {
      const fc = objectAt(p.functionCall, `${at}.functionCall`);
      const name = stringAt(fc.name, `${at}.functionCall.name`);
      const id = typeof fc.id === 'string' && fc.id ? fc.id : `call_${i}_${j}`;
      const call: ToolCall = { id, type: 'function', function: { name, arguments: JSON.stringify(fc.args ?? {}) } };
      if (typeof p.thoughtSignature === 'string' && p.thoughtSignature) call.extra_content = { google: { thought_signature: p.thoughtSignature } };
      toolCalls.push(call);
      calls.opened(id, name);
    } else if (typeof p.text === 'string') {
      if (p.thought !== true) text += p.text;
    } else if (Object.keys(p).some((k) => k !== 'thoughtSignature' && k !== 'thought')) {
      drops.add(at, 'the chat model has no place for it in an assistant turn', partKind(p));
    }
  });
  if (!text && !toolCalls.length) return [];
  const message: ChatMessage = { role: 'assistant', content: text || null };
  if (toolCalls.length) message.tool_calls = toolCalls;
  return [message];
}

function userTurn(parts: Json[], i: number, calls: CallBook, drops: Drops): ChatMessage[] {
  const responses: Array<{ at: string; id: string | undefined; name: string; response: unknown }> = [];
  const content: ContentPart[] = [];
  parts.forEach((p, j) => {
    const at = `contents[${i}].parts[${j}]`;
    if (p.functionResponse != null) {
      const fr = objectAt(p.functionResponse, `${at}.functionResponse`);
      const name = stringAt(fr.name, `${at}.functionResponse.name`);
      responses.push({ at, id: typeof fr.id === 'string' && fr.id ? fr.id : undefined, name, response: fr.response ?? {} });
      // Media a function returned (Gemini 3's multimodal function responses): a tool message is
      // text only, so they follow the results in the user message.
      if (fr.parts != null) {
        arrayAt(fr.parts, `${at}.functionResponse.parts`).forEach((inner, k) => {
          const part = userPart(objectAt(inner, `${at}.functionResponse.parts[${k}]`), `${at}.functionResponse.parts[${k}]`, drops);
          if (part) content.push(part);
        });
      }
      return;
    }
    const part = userPart(p, at, drops);
    if (part) content.push(part);
  });
  // Responses with an id claim their calls first, so one without takes a call nobody else answers.
  const ids = new Map(responses.filter((r) => r.id).map((r) => [r, calls.answered(r.id, r.name)]));
  const results: ChatMessage[] = responses.map((r) => {
    const id = ids.get(r) ?? calls.answered(undefined, r.name);
    if (!id) throw invalid(`${r.at}.functionResponse`, `no earlier functionCall named ${JSON.stringify(r.name)} is waiting for this response`);
    return { role: 'tool', tool_call_id: id, content: JSON.stringify(r.response) };
  });
  if (!content.length) return results;
  // A text-only turn is a plain string: the most widely understood form.
  const message: ChatMessage = content.every(isText) ? { role: 'user', content: content.map((c) => c.text).join('') } : { role: 'user', content };
  return [...results, message];
}

const isText = (c: ContentPart): c is TextPart => c.type === 'text';

function userPart(p: Json, at: string, drops: Drops): ContentPart | undefined {
  if (typeof p.text === 'string') return p.thought === true || !p.text ? undefined : { type: 'text', text: p.text };
  if (p.inlineData != null) {
    const data = objectAt(p.inlineData, `${at}.inlineData`);
    const mimeType = stringAt(data.mimeType, `${at}.inlineData.mimeType`).toLowerCase();
    const base64 = stringAt(data.data, `${at}.inlineData.data`);
    if (mimeType.startsWith('image/')) return { type: 'image_url', image_url: { url: `data:${mimeType};base64,${base64}` } };
    const format = AUDIO_FORMATS[mimeType];
    if (format) return { type: 'input_audio', input_audio: { data: base64, format } };
    return { type: 'file', file: { file_data: `data:${mimeType};base64,${base64}`, filename: `${at.replace(/\W+/g, '-')}.${mimeType.split('/')[1] ?? 'bin'}` } };
  }
  if (p.fileData != null) {
    const file = objectAt(p.fileData, `${at}.fileData`);
    const uri = stringAt(file.fileUri, `${at}.fileData.fileUri`);
    const mimeType = typeof file.mimeType === 'string' ? file.mimeType.toLowerCase() : '';
    if (mimeType.startsWith('image/') && /^https?:\/\//.test(uri)) return { type: 'image_url', image_url: { url: uri } };
    drops.refuse(`${at}.fileData`, 'only images at http(s) URLs have a chat form', mimeType || 'a file');
    return undefined;
  }
  drops.add(at, 'the chat model has no place for it', partKind(p));
  return undefined;
}

/** The part's data field, to name what was dropped (`executableCode`, `videoMetadata`, ...). */
function partKind(p: Json): string {
  return Object.keys(p).find((k) => k !== 'thoughtSignature' && k !== 'thought' && isObject(p[k])) ?? Object.keys(p)[0] ?? 'an empty part';
}
