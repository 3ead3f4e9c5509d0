/**
 * A chat tool call → the Responses item the client expects for the tool it offered (tools.ts):
 * a `function_call` named as the client named it, with its `namespace` when it has one, a
 * `custom_tool_call` whose `input` is the string the chat function got as its one argument, or a
 * `tool_search_call` (client execution) whose `arguments` are the function's, as an object.
 * A call of a name the request never offered (a model inventing one) stays a function_call of
 * that name, so the client can answer it with an error of its own.
 */
import type { ResponseIds } from './ids.ts';
import { CUSTOM_INPUT, callableNamed } from './tools.ts';
import type { Callable, CustomToolCallItem, FunctionCallItem, ToolSearchCallItem } from './types.ts';

export type CallItem = FunctionCallItem | CustomToolCallItem | ToolSearchCallItem;

/** The item of a call, opened (`in_progress`, no arguments or input yet). */
export function callItemOf(callables: readonly Callable[], chatName: string, ids: ResponseIds, outputIndex: number, callId: string | undefined): CallItem {
  const tool = callableNamed(callables, chatName);
  const kind = tool?.kind ?? 'function';
  const id = ids.itemId(kind === 'custom' ? 'ctc' : kind === 'tool_search' ? 'tsc' : 'fc', outputIndex);
  // A provider that never sent the call's id still gets one the client can answer with.
  const call_id = callId || `call_${id}`;
  if (kind === 'tool_search') return { type: 'tool_search_call', id, call_id, execution: 'client', arguments: {}, status: 'in_progress' };
  const name = tool?.name ?? chatName;
  const item: FunctionCallItem | CustomToolCallItem =
    kind === 'custom' ? { type: 'custom_tool_call', id, call_id, name, input: '', status: 'in_progress' } : { type: 'function_call', id, call_id, name, arguments: '', status: 'in_progress' };
  if (tool?.namespace !== undefined) item.namespace = tool.namespace;
  return item;
}

/** A tool search call's arguments: the JSON object the model wrote, or its text when it is not JSON. */
export function searchArgumentsOf(args: string): unknown {
  try {
    return JSON.parse(args || '{}');
  } catch {
    return args;
  }
}

/**
 * A custom call's input from the chat arguments: the `input` string of {"input": "..."}. A model
 * that answered otherwise (another key, bare text) still has its words passed on: the arguments
 * as they came, or the one value as JSON text when it is not a string.
 */
export function customInputOf(args: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(args);
  } catch {
    return args;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return typeof parsed === 'string' ? parsed : args;
  const values = Object.entries(parsed);
  const value = CUSTOM_INPUT in parsed ? (parsed as Record<string, unknown>)[CUSTOM_INPUT] : values.length === 1 ? values[0][1] : undefined;
  if (value === undefined) return args;
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** The opening of `{"input": "` (any whitespace), after which the string's characters are the input. */
const OPENING = /^\s*\{\s*"input"\s*:\s*"/;
/** How much of the arguments may come before the opening is given up on. */
const OPENING_MAX = 64;
const ESCAPES: Readonly<Record<string, string>> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };

/**
 * Decodes a custom call's input as its JSON arguments stream in, so the client sees the input
 * grow (`response.custom_tool_call_input.delta`), as OpenAI streams it. Arguments of another
 * shape yield no deltas: the whole input comes with the `.done` event (customInputOf).
 *
 * @example
 * const d = new CustomInputDecoder();
 * d.push('{"input": "*** Begin');   // '*** Begin'
 * d.push(' Patch\\n');              // ' Patch\n'
 */
export class CustomInputDecoder {
  #state: 'opening' | 'string' | 'escape' | 'unicode' | 'closed' = 'opening';
  #pending = '';
  /** A high surrogate waiting for its pair, so a delta never splits a character. */
  #high = '';
  /** The decoded input so far. */
  text = '';

  /** The input characters one more fragment of the arguments adds ('' when none). */
  push(fragment: string): string {
    let out = '';
    let rest = fragment;
    if (this.#state === 'opening') {
      this.#pending += fragment;
      const opening = OPENING.exec(this.#pending);
      if (!opening) {
        if (this.#pending.length > OPENING_MAX) this.#state = 'closed';
        return '';
      }
      rest = this.#pending.slice(opening[0].length);
      this.#pending = '';
      this.#state = 'string';
    }
    for (const ch of rest) {
      if (this.#state === 'closed') break;
      if (this.#state === 'string') {
        if (ch === '"') this.#state = 'closed';
        else if (ch === '\\') this.#state = 'escape';
        else out += this.#char(ch);
      } else if (this.#state === 'escape') {
        if (ch === 'u') {
          this.#state = 'unicode';
          this.#pending = '';
        } else {
          out += this.#char(ESCAPES[ch] ?? ch);
          this.#state = 'string';
        }
      } else if (this.#state === 'unicode') {
        this.#pending += ch;
        if (this.#pending.length === 4) {
          out += this.#char(String.fromCharCode(Number.parseInt(this.#pending, 16)));
          this.#pending = '';
          this.#state = 'string';
        }
      }
    }
    this.text += out;
    return out;
  }

  #char(ch: string): string {
    const code = ch.charCodeAt(0);
    if (ch.length === 1 && code >= 0xd800 && code <= 0xdbff) {
      this.#high = ch;
      return '';
    }
    const out = this.#high + ch;
    this.#high = '';
    return out;
  }
}
