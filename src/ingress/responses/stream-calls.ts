/**
 * A Responses stream's tool calls as chat's tool-call deltas arrive: each a function_call item
 * (response.function_call_arguments.delta), a custom_tool_call item (its input decoded from the
 * JSON arguments as they stream, response.custom_tool_call_input.delta) or a tool_search_call
 * item (its arguments whole at output_item.done). Calls stay open until the stream ends, so a
 * provider that interleaves the arguments of parallel calls is followed.
 */
import type { ChunkToolCallDelta } from '../../openai-types.ts';
import { type CallItem, CustomInputDecoder, callItemOf, customInputOf, searchArgumentsOf } from './calls.ts';
import type { ResponseIds } from './ids.ts';
import type { StreamOutput } from './stream-output.ts';
import type { Callable, CustomToolCallItem } from './types.ts';

/** A chat tool call as its deltas arrive; `item` once it has a name. */
interface PendingCall {
  id?: string;
  name?: string;
  /** The arguments as they came (before the name too). */
  arguments: string;
  item?: CallItem;
  /** A custom call's input, decoded as the arguments stream. */
  decoder?: CustomInputDecoder;
}

export class StreamedCalls {
  readonly #out: StreamOutput;
  readonly #callables: readonly Callable[];
  readonly #ids: ResponseIds;
  /** Chat tool-call index → the call. */
  readonly #calls = new Map<number, PendingCall>();

  constructor(out: StreamOutput, callables: readonly Callable[], ids: ResponseIds) {
    this.#out = out;
    this.#callables = callables;
    this.#ids = ids;
  }

  delta(delta: ChunkToolCallDelta): void {
    let call = this.#calls.get(delta.index);
    if (!call) this.#calls.set(delta.index, (call = { arguments: '' }));
    call.id ||= delta.id;
    call.name ||= delta.function?.name;
    const args = delta.function?.arguments ?? '';
    call.arguments += args;
    // The item opens once its name is known (chat's first delta of a call carries it, with the
    // id); fragments before that wait, and go out as one delta.
    if (call.item) this.#arguments(call, args);
    else if (call.name) this.#open(call);
  }

  /** The stream ended: every call's `.done` events; `cutShort` as StreamOutput.done takes it. */
  closeAll(cutShort: boolean): void {
    for (const call of this.#calls.values()) {
      // A call whose name never came: shown as it is rather than lost.
      if (!call.item) this.#open(call);
      this.#close(call, cutShort);
    }
  }

  #arguments(call: PendingCall, args: string): void {
    const item = call.item!;
    if (item.type === 'function_call') {
      if (!args) return;
      item.arguments += args;
      this.#out.emit({ type: 'response.function_call_arguments.delta', item_id: item.id, output_index: this.#out.indexOf(item), delta: args });
      return;
    }
    // A tool search call's arguments are an object: they come whole with output_item.done.
    if (item.type === 'custom_tool_call') this.#inputDelta(item, call.decoder!.push(args));
  }

  #inputDelta(item: CustomToolCallItem, text: string): void {
    if (!text) return;
    item.input += text;
    this.#out.emit({ type: 'response.custom_tool_call_input.delta', item_id: item.id, output_index: this.#out.indexOf(item), delta: text });
  }

  #open(call: PendingCall): void {
    call.item = callItemOf(this.#callables, call.name ?? '', this.#ids, this.#out.items.length, call.id);
    if (call.item.type === 'custom_tool_call') call.decoder = new CustomInputDecoder();
    this.#out.add(call.item);
    this.#arguments(call, call.arguments);
  }

  #close(call: PendingCall, cutShort: boolean): void {
    const item = call.item!;
    const at = { item_id: item.id, output_index: this.#out.indexOf(item) };
    if (item.type === 'function_call') {
      this.#out.emit({ type: 'response.function_call_arguments.done', ...at, name: item.name, arguments: item.arguments });
    } else if (item.type === 'tool_search_call') {
      item.arguments = searchArgumentsOf(call.arguments);
    } else {
      // The whole arguments say what the input is; what streamed was its beginning, or nothing
      // when they were not {"input": "..."}.
      const input = customInputOf(call.arguments);
      if (input.startsWith(item.input)) this.#inputDelta(item, input.slice(item.input.length));
      item.input = input;
      this.#out.emit({ type: 'response.custom_tool_call_input.done', ...at, input });
    }
    this.#out.done(item, cutShort);
  }
}
