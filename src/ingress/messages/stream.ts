/**
 * Chat completion chunks → Anthropic's named stream events, stateful per request
 * (https://docs.anthropic.com/en/docs/build-with-claude/streaming#event-types):
 *
 *   message_start          on the first chunk with a choice or usage: the message with empty
 *                          content, stop_reason null, the usage known so far (zeros, usually)
 *   ping                   right after it, as Anthropic sends one early in every stream
 *   content_block_start    when the kind of content changes: `reasoning_content` → a thinking
 *   content_block_delta    block (thinking_delta), `content` and `refusal` → a text block
 *   content_block_stop     (text_delta), each chat tool-call index → its own tool_use block
 *                          (input_json_delta with the argument fragments as they come). One block
 *                          is open at a time; indexes count from 0 in the order blocks open.
 *                          The gateway's `thinking_blocks` delta: a signature → signature_delta on
 *                          the open thinking block (one opened for it if none is), which it closes;
 *                          a redacted block → its own redacted_thinking block, opened and closed.
 *                          The gateway's `web_search_calls`: a server_tool_use block (its query as
 *                          input_json_delta) and a web_search_tool_result block, each opened and
 *                          closed; `annotations`: citations_delta on the open text block
 *                          (web-search.ts).
 *   message_delta          at end(): stop_reason and stop_sequence (message-fields.ts) and the
 *                          cumulative usage (output_tokens, and the input counts once a usage
 *                          chunk brought them, which the SDK's accumulator takes over)
 *   message_stop           last
 *   error                  fail(): `{type:'error', error:{type, message}}`, then nothing more
 *
 * The caller may hold message_start and ping (everything push() returns before the first
 * content_block_start) until content exists: until then nothing has reached the client, so the
 * pipeline can still fail over to another target or answer a plain HTTP error. (The chat pipeline
 * already hands over a stream only once its first chunk exists.)
 *
 * A tool-call block opens once its name is known (fragments before it are buffered). Argument
 * fragments for a tool call whose block was closed already, because another block opened since,
 * have nowhere to go in Anthropic's grammar and are dropped; providers send each call's fragments
 * together, so this does not happen with the built-in ones.
 */
import type { ChatCompletionChunk, ChunkToolCallDelta, FinishReason, ThinkingBlock, UrlCitation, Usage, WebSearchCall } from '../../openai-types.ts';
import { citationOf, searchBlocks } from './web-search.ts';
import type { GatewayError } from '../../errors.ts';
import { anthropicErrorOf } from './errors.ts';
import { messageIdOf, reasoningOf, stopOf, usageOf } from './message-fields.ts';
import type { AnthropicEvent, BlockDelta, ContentBlock, MessagesRequestInfo } from './types.ts';

type OpenBlock = { kind: 'thinking' | 'text' | 'redacted' | 'server'; index: number } | { kind: 'tool'; index: number; call: number };

interface PendingCall {
  id?: string;
  name?: string;
  /** Fragments that came before the name. */
  args: string;
  /** Set once the call's block has opened. */
  opened: boolean;
}

export class MessagesStreamWriter {
  readonly #request: MessagesRequestInfo;
  #started = false;
  #done = false;
  #open: OpenBlock | undefined;
  #nextIndex = 0;
  readonly #calls = new Map<number, PendingCall>();
  #usage: Usage | undefined;
  #finish: FinishReason | string | null = null;
  #matchedStop: unknown;
  #refused = false;
  /** The text so far, which citations quote. */
  #text = '';

  /** `request` is the client's Messages body: its model names the answer until a chunk does, its stop_sequences are matched. */
  constructor(request: MessagesRequestInfo) {
    this.#request = request;
  }

  /** Whether message_start went out (anything the client could have seen). */
  get started(): boolean {
    return this.#started;
  }

  push(chunk: ChatCompletionChunk): AnthropicEvent[] {
    const out: AnthropicEvent[] = [];
    if (this.#done) return out;
    const choice = chunk.choices?.find((c) => c.index === 0) ?? chunk.choices?.[0];
    if (chunk.usage) this.#usage = chunk.usage;
    // Azure's first chunk carries only prompt_filter_results: nothing to say yet.
    if (!choice && !chunk.usage) return out;
    this.#start(chunk, out);
    if (!choice) return out;
    const delta = choice.delta ?? {};
    const reasoning = reasoningOf(delta);
    if (reasoning) this.#append('thinking', { type: 'thinking_delta', thinking: reasoning }, out);
    if (Array.isArray(delta.thinking_blocks)) for (const block of delta.thinking_blocks) this.#thinkingBlock(block, out);
    if (typeof delta.content === 'string' && delta.content) {
      this.#text += delta.content;
      this.#append('text', { type: 'text_delta', text: delta.content }, out);
    }
    if (Array.isArray(delta.annotations)) this.#cite(delta.annotations, out);
    if (Array.isArray(delta.web_search_calls)) for (const search of delta.web_search_calls) this.#search(search, out);
    if (typeof delta.refusal === 'string' && delta.refusal) {
      this.#refused = true;
      this.#append('text', { type: 'text_delta', text: delta.refusal }, out);
    }
    for (const call of delta.tool_calls ?? []) this.#toolCall(call, out);
    if (choice.finish_reason) {
      this.#finish = choice.finish_reason;
      this.#matchedStop = choice.stop_reason;
    }
    return out;
  }

  /** The chat stream ended: close the open block, then message_delta and message_stop. */
  end(): AnthropicEvent[] {
    const out: AnthropicEvent[] = [];
    if (this.#done) return out;
    this.#start(undefined, out);
    // A call whose name never came still gets its block: its arguments are part of the answer.
    for (const [index, call] of this.#calls) if (!call.opened) this.#openCall(index, call, out);
    this.#close(out);
    this.#done = true;
    const stop = stopOf({ finishReason: this.#finish, matchedStop: this.#matchedStop, hasToolCalls: this.#calls.size > 0, refused: this.#refused }, this.#request);
    const usage = this.#usage ? usageOf(this.#usage) : { output_tokens: 0 };
    out.push({ type: 'message_delta', delta: stop, usage }, { type: 'message_stop' });
    return out;
  }

  /** The stream failed after it began: Anthropic's in-stream `error` event; the writer is done. */
  fail(error: GatewayError): AnthropicEvent[] {
    if (this.#done) return [];
    this.#done = true;
    return [{ type: 'error', error: anthropicErrorOf(error).body.error }];
  }

  #start(chunk: ChatCompletionChunk | undefined, out: AnthropicEvent[]): void {
    if (this.#started) return;
    this.#started = true;
    const model = chunk?.model || (typeof this.#request.model === 'string' ? this.#request.model : '');
    out.push(
      {
        type: 'message_start',
        message: { id: messageIdOf(chunk?.id), type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: usageOf(this.#usage) },
      },
      { type: 'ping' },
    );
  }

  /** Text or thinking: continue the open block of that kind, or open one. */
  #append(kind: 'thinking' | 'text', delta: BlockDelta, out: AnthropicEvent[]): void {
    if (this.#open?.kind !== kind) {
      const block: ContentBlock = kind === 'text' ? { type: 'text', text: '' } : { type: 'thinking', thinking: '', signature: '' };
      this.#openBlock({ kind, index: this.#nextIndex }, block, out);
    }
    out.push({ type: 'content_block_delta', index: this.#open!.index, delta });
  }

  /** A signature ends the thinking block it signs; a redacted block stands alone. */
  #thinkingBlock(block: ThinkingBlock, out: AnthropicEvent[]): void {
    if (block?.type === 'redacted_thinking') {
      if (typeof block.data !== 'string') return;
      this.#openBlock({ kind: 'redacted', index: this.#nextIndex }, { type: 'redacted_thinking', data: block.data }, out);
      this.#close(out);
      return;
    }
    if (block?.type !== 'thinking') return;
    if (typeof block.thinking === 'string' && block.thinking) this.#append('thinking', { type: 'thinking_delta', thinking: block.thinking }, out);
    if (typeof block.signature !== 'string' || !block.signature) return;
    if (this.#open?.kind !== 'thinking') this.#openBlock({ kind: 'thinking', index: this.#nextIndex }, { type: 'thinking', thinking: '', signature: '' }, out);
    out.push({ type: 'content_block_delta', index: this.#open!.index, delta: { type: 'signature_delta', signature: block.signature } });
    this.#close(out);
  }

  /** A search: its server_tool_use block (the query streamed as its input) and its result block. */
  #search(search: WebSearchCall, out: AnthropicEvent[]): void {
    const [use, result] = searchBlocks(search);
    this.#openBlock({ kind: 'server', index: this.#nextIndex }, { ...use, input: {} } as ContentBlock, out);
    if (use.type === 'server_tool_use' && Object.keys(use.input).length)
      out.push({ type: 'content_block_delta', index: this.#open!.index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(use.input) } });
    this.#openBlock({ kind: 'server', index: this.#nextIndex }, result, out);
    this.#close(out);
  }

  /** Citations of the text block being written (Anthropic's grammar has them nowhere else). */
  #cite(annotations: UrlCitation[], out: AnthropicEvent[]): void {
    if (this.#open?.kind !== 'text') return;
    for (const annotation of annotations) {
      const citation = citationOf(annotation, this.#text);
      if (citation) out.push({ type: 'content_block_delta', index: this.#open.index, delta: { type: 'citations_delta', citation } });
    }
  }

  #toolCall(delta: ChunkToolCallDelta, out: AnthropicEvent[]): void {
    const index = typeof delta.index === 'number' ? delta.index : 0;
    let call = this.#calls.get(index);
    if (!call) this.#calls.set(index, (call = { args: '', opened: false }));
    if (delta.id) call.id ??= delta.id;
    if (delta.function?.name) call.name ??= delta.function.name;
    const args = delta.function?.arguments ?? '';
    if (!call.opened) {
      call.args += args;
      if (call.name) this.#openCall(index, call, out);
      return;
    }
    const open = this.#open;
    if (args && open?.kind === 'tool' && open.call === index) out.push({ type: 'content_block_delta', index: open.index, delta: { type: 'input_json_delta', partial_json: args } });
  }

  #openCall(index: number, call: PendingCall, out: AnthropicEvent[]): void {
    call.opened = true;
    const id = call.id ?? `toolu_${this.#nextIndex}`;
    this.#openBlock({ kind: 'tool', index: this.#nextIndex, call: index }, { type: 'tool_use', id, name: call.name ?? '', input: {} }, out);
    if (call.args) out.push({ type: 'content_block_delta', index: this.#open!.index, delta: { type: 'input_json_delta', partial_json: call.args } });
    call.args = '';
  }

  #openBlock(open: OpenBlock, block: ContentBlock, out: AnthropicEvent[]): void {
    this.#close(out);
    this.#open = open;
    this.#nextIndex++;
    out.push({ type: 'content_block_start', index: open.index, content_block: block });
  }

  #close(out: AnthropicEvent[]): void {
    if (!this.#open) return;
    out.push({ type: 'content_block_stop', index: this.#open.index });
    this.#open = undefined;
  }
}

/** One event on the wire: `event: <type>` and its JSON, as Anthropic frames them. */
export function toSse(event: AnthropicEvent): string {
  return `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}
