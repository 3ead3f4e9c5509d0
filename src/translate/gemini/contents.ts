/**
 * OpenAI chat messages → Gemini `systemInstruction` + `contents`.
 *
 * - `system` and `developer` messages, wherever they stand, become `systemInstruction` parts
 *   (sent with `role: "user"`, as Google's SDKs do). A request with nothing but system messages
 *   sends them as the user turn instead: Gemini requires at least one content.
 * - `user` → role `user`; `assistant` → role `model` (text, then one `functionCall` part per
 *   tool call); `tool` → a `functionResponse` part in a user turn, named after the call it answers
 *   (Gemini matches results by function name; it has no call ids).
 * - Consecutive turns of one role are merged (parallel tool results share one turn); empty
 *   turns and empty text parts are left out (Gemini rejects them).
 * - Images: base64 data URLs → `inlineData`, other URLs → `fileData.fileUri`; `input_audio` and
 *   inline `file` data → `inlineData`.
 * - Thought signatures: a tool call carrying `extra_content.google.thought_signature` (as this
 *   plugin and Google's own OpenAI endpoint answer them) gets it back as the part's
 *   `thoughtSignature`. Gemini 3 rejects a replayed function call without one, so when a model
 *   turn has none at all its first call gets Google's documented placeholder.
 * - Gemini's signatures in the gateway's `thinking_blocks` (tagged `gemini:<site>:`, see
 *   translate/chat/thinking.ts) go back where they came from
 *   (https://ai.google.dev/gemini-api/docs/thought-signatures): a signed thought as a
 *   `thought: true` part with its text, ahead of the turn's other parts; a function call's to the
 *   first call that has none of its own; a text part's to the turn's text. Other families'
 *   signatures, and unsigned thinking (Gemini reads nothing from it), are left out.
 */
import type { ChatMessage, ContentPart, ToolCall } from '../../openai-types.ts';
import type { ProviderCall } from '../../plugin-api.ts';
import { GatewayError } from '../../errors.ts';
import { unsupportedParam } from '../../providers/params.ts';
import { parseDataUrl, partsOf, textOf, toolCallArguments } from '../../protocol/content.ts';
import type { GeminiContent, GeminiPart } from './native.ts';
import { generationOf } from './model.ts';
import { geminiSignatureOf } from '../chat/thinking.ts';

/** Google's placeholder for a function call whose real signature was lost (Gemini 3+). */
export const SKIP_SIGNATURE = 'skip_thought_signature_validator';

export interface TranslatedMessages {
  systemInstruction?: { role: 'user'; parts: GeminiPart[] };
  contents: GeminiContent[];
}

export function translateMessages(call: ProviderCall): TranslatedMessages {
  const system: GeminiPart[] = [];
  const contents: GeminiContent[] = [];
  /** Tool call id → function name, for the functionResponse parts that answer them. */
  const names = new Map<string, string>();
  const needsSignature = (generationOf(call.model) ?? 0) >= 3;
  call.request.messages.forEach((m, i) => {
    if (m.role === 'system' || m.role === 'developer') {
      const text = textOf(m.content);
      if (text) system.push({ text });
      return;
    }
    const turn = translateMessage(m, i, call, names, needsSignature);
    if (turn) push(contents, turn);
  });
  if (!contents.length && system.length) return { contents: [{ role: 'user', parts: system }] };
  return system.length ? { systemInstruction: { role: 'user', parts: system }, contents } : { contents };
}

function translateMessage(m: ChatMessage, i: number, call: ProviderCall, names: Map<string, string>, needsSignature: boolean): GeminiContent | undefined {
  switch (m.role) {
    case 'user': {
      const parts: GeminiPart[] = [];
      partsOf(m.content).forEach((part, j) => {
        const p = userPart(part, typeof m.content === 'string' ? `messages[${i}].content` : `messages[${i}].content[${j}]`, call);
        if (p) parts.push(p);
      });
      return { role: 'user', parts };
    }
    case 'assistant':
      return { role: 'model', parts: modelParts(m, i, names, needsSignature) };
    case 'tool': {
      const id = m.tool_call_id ?? '';
      const name = names.get(id);
      if (!name) {
        const param = `messages[${i}].tool_call_id`;
        throw new GatewayError('invalid_request', `Invalid '${param}': no earlier assistant message has a tool call with the id ${JSON.stringify(id)}.`, { param });
      }
      return { role: 'user', parts: [{ functionResponse: { name, response: responseObject(textOf(m.content)) } }] };
    }
    default:
      // `function` (the legacy role) and anything newer.
      unsupportedParam(call, `messages[${i}].role`, `with the value "${m.role}" is not supported`);
      return undefined;
  }
}

function modelParts(m: ChatMessage, i: number, names: Map<string, string>, needsSignature: boolean): GeminiPart[] {
  const parts: GeminiPart[] = [];
  let callSignature: string | undefined;
  let textSignature: string | undefined;
  for (const block of m.thinking_blocks ?? []) {
    const signed = geminiSignatureOf(block);
    if (signed?.site === 'thought' && block.type === 'thinking') parts.push({ text: block.thinking, thought: true, thoughtSignature: signed.signature });
    else if (signed?.site === 'call') callSignature ??= signed.signature;
    else if (signed?.site === 'text') textSignature = signed.signature;
  }
  const text = textOf(m.content);
  if (text) parts.push(textSignature ? { text, thoughtSignature: textSignature } : { text });
  const calls: GeminiPart[] = (m.tool_calls ?? []).map((tc, j) => {
    const args = toolCallArguments(tc, i, j);
    const name = tc.function?.name ?? '';
    names.set(tc.id, name);
    const part: GeminiPart = { functionCall: { name, args } };
    const signature = signatureOf(tc);
    if (signature) part.thoughtSignature = signature;
    return part;
  });
  if (callSignature && calls.length && !calls.some((p) => p.thoughtSignature)) calls[0].thoughtSignature = callSignature;
  // Gemini signs only the first of parallel calls; a turn with no signature at all lost it.
  if (needsSignature && calls.length && !calls.some((p) => p.thoughtSignature)) calls[0].thoughtSignature = SKIP_SIGNATURE;
  parts.push(...calls);
  return parts;
}

/** `extra_content.google.thought_signature`, where this plugin puts Gemini's signature. */
export function signatureOf(tc: ToolCall): string | undefined {
  const extra = tc.extra_content as { google?: { thought_signature?: unknown } } | undefined;
  const signature = extra?.google?.thought_signature;
  return typeof signature === 'string' && signature ? signature : undefined;
}

/**
 * Gemini wants the function's result as a JSON object: a JSON object goes as it is, anything
 * else under `output` (the key Google documents for the function's output).
 */
export function responseObject(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    if (value && typeof value === 'object') return Array.isArray(value) ? { output: value } : (value as Record<string, unknown>);
  } catch {
    // plain text
  }
  return { output: text };
}

/** One user content part; undefined when it is empty or dropped as unsupported. */
function userPart(part: ContentPart, param: string, call: ProviderCall): GeminiPart | undefined {
  switch (part.type) {
    case 'text':
      return part.text ? { text: part.text } : undefined;
    case 'image_url': {
      const url = part.image_url?.url ?? '';
      const data = parseDataUrl(url);
      if (data) return { inlineData: { mimeType: data.mediaType, data: data.data } };
      if (url.startsWith('data:') || !url) {
        unsupportedParam(call, param, '(an image URL that is neither a base64 data URL nor a link) is not supported');
        return undefined;
      }
      const mimeType = imageTypeOf(url);
      return { fileData: mimeType ? { mimeType, fileUri: url } : { fileUri: url } };
    }
    case 'input_audio': {
      const format = String(part.input_audio?.format ?? '').toLowerCase();
      if (part.input_audio?.data && format) return { inlineData: { mimeType: `audio/${format}`, data: part.input_audio.data } };
      unsupportedParam(call, param, '(an input_audio part without data and format) is not supported');
      return undefined;
    }
    case 'file': {
      const data = typeof part.file?.file_data === 'string' ? parseDataUrl(part.file.file_data) : undefined;
      if (data) return { inlineData: { mimeType: data.mediaType, data: data.data } };
      unsupportedParam(call, param, '(a file part other than inline base64 file_data) is not supported');
      return undefined;
    }
    default:
      unsupportedParam(call, param, `(a ${part.type} part) is not supported`);
      return undefined;
  }
}

const IMAGE_TYPES: Record<string, string> = { png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', webp: 'image/webp', gif: 'image/gif', heic: 'image/heic', heif: 'image/heif' };

/** The image type a URL's file extension names, when it names one. */
function imageTypeOf(url: string): string | undefined {
  let pathname = url;
  try {
    pathname = new URL(url).pathname;
  } catch {
    // not a URL we can parse: look at the text as it is
  }
  const ext = /\.([a-z0-9]+)$/i.exec(pathname)?.[1]?.toLowerCase();
  return ext ? IMAGE_TYPES[ext] : undefined;
}

/** Appends a turn (if it has parts), merging it into the previous one when both have the same role. */
function push(contents: GeminiContent[], next: GeminiContent): void {
  if (!next.parts.length) return;
  const last = contents.at(-1);
  if (last && last.role === next.role) last.parts.push(...next.parts);
  else contents.push(next);
}
