/**
 * A chat chunk stream → the Responses API event stream
 * (https://platform.openai.com/docs/api-reference/responses-streaming), stateful, one writer per
 * request. The events, in the order OpenAI sends them:
 *
 *   start()   response.created, response.in_progress (the response echoed, no output yet)
 *   push()    per chunk of choice 0, only for what it carries:
 *             reasoning_content  reasoning item: output_item.added, content_part.added (reasoning_text),
 *                                response.reasoning_text.delta
 *             content            message item: output_item.added, content_part.added (output_text),
 *                                response.output_text.delta (with the chunk's logprobs)
 *             refusal            the message's refusal part: content_part.added, response.refusal.delta
 *             thinking_blocks    (the gateway's) kept with the reasoning text they sign; a reasoning
 *                                item takes those signed so far as its `encrypted_content` when
 *                                it closes, when `include` asks for it (reasoning.ts); signatures
 *                                that come after it (Gemini signs its text and calls) make a
 *                                reasoning item of their own at the end
 *             web_search_calls   (the gateway's) each a web_search_call item: output_item.added,
 *                                response.web_search_call.in_progress / .searching / .completed,
 *                                output_item.done, at once (the provider says so once it ran)
 *             annotations        url_citation annotations of the text part they fall in:
 *                                response.output_text.annotation.added (offsets made the part's)
 *             tool_calls[k]      function_call item: output_item.added (call_id, name, namespace),
 *                                response.function_call_arguments.delta; for a custom tool a
 *                                custom_tool_call item and response.custom_tool_call_input.delta,
 *                                the input decoded from the JSON arguments as they stream (calls.ts);
 *                                for client tool search a tool_search_call item, its arguments
 *                                whole at output_item.done
 *             A new kind of item closes the one before (reasoning, then text, then calls, as
 *             chat streams them); function calls stay open until the end, so a provider that
 *             interleaves the arguments of parallel calls is followed. Usage, finish_reason and
 *             the answering model are remembered.
 *   end()     the `.done` events of every open part and item (output_text.done / refusal.done /
 *             reasoning_text.done / function_call_arguments.done / custom_tool_call_input.done,
 *             content_part.done,
 *             output_item.done), then response.completed, or response.incomplete when
 *             finish_reason was length or content_filter; it carries the whole response, with
 *             usage when the usage chunk arrived.
 *   fail(e)   an `error` event, then response.failed with the output as far as it went.
 *
 * Every event has the next `sequence_number` (from 0); `output_index` is the item's place in
 * `response.output`, `content_index` the part's place in its item, `item_id` the item's id. The
 * objects in events are snapshots: later events never change what an earlier one said. The items
 * and the numbered events are kept by StreamOutput (stream-output.ts), the tool calls by
 * StreamedCalls (stream-calls.ts).
 *
 * The commitment point. start() says nothing about the answer, and push() returns no event for a
 * chunk with nothing visible (a role-only or usage-only chunk), so the first OUTPUT event (the
 * first output_item.added) is where the client learns something. The caller may buffer start()'s
 * events until then: while nothing has been written, a failure can still be an HTTP error, or a
 * failover to another target, whose chunks this same writer can take since it has emitted no
 * output. After it, a failure can only be told inside the stream: fail().
 */
import type { GatewayError } from '../../errors.ts';
import type { ChatCompletionChunk, FinishReason, ThinkingBlock, UrlCitation, Usage, WebSearchCall } from '../../openai-types.ts';
import { encodeReasoning } from './reasoning.ts';
import { annotationOf, searchItemOf } from './searches.ts';
import { responseErrorOf } from './errors.ts';
import type { ResponseIds } from './ids.ts';
import { ENCRYPTED_REASONING, finishResponse, logprobsOf, responseSkeleton, statusOf, usageOf } from './response.ts';
import { snapshot } from './snapshot.ts';
import { StreamedCalls } from './stream-calls.ts';
import { StreamOutput, type Unsequenced } from './stream-output.ts';
import type { LogProb, MessageItem, OutputItem, OutputText, ReasoningItem, Refusal, ResponseObject, ResponsesEvent, ResponsesRequest, UrlCitationAnnotation } from './types.ts';

/** The message's part being written: its index in the item and what it has said so far. */
interface OpenPart {
  kind: 'text' | 'refusal';
  index: number;
  text: string;
  logprobs: LogProb[];
  annotations: UrlCitationAnnotation[];
  /** Where the part's text starts in the chat content (what chat citations count from). */
  base: number;
}

export class ResponsesStreamWriter {
  readonly #ids: ResponseIds;
  readonly #include: readonly string[];
  readonly #response: ResponseObject;
  #state: 'new' | 'started' | 'ended' = 'new';
  readonly #out = new StreamOutput();
  /** Every item opened so far, in output order: what `response.output` will be. */
  readonly #output = this.#out.items;
  #reasoning: ReasoningItem | undefined;
  #message: MessageItem | undefined;
  #part: OpenPart | undefined;
  /** The tool calls; their items are open until end(). */
  readonly #calls: StreamedCalls;
  #finish: FinishReason | null = null;
  #usage: Usage | undefined;
  #serviceTier: unknown;
  /** The chat content streamed so far (UTF-16 units), where chat citations count from. */
  #written = 0;
  /** Signed reasoning not yet in a reasoning item, and the reasoning text since the last signature. */
  #signed: ThinkingBlock[] = [];
  #unsigned = '';

  constructor(request: ResponsesRequest, ids: ResponseIds) {
    this.#ids = ids;
    this.#calls = new StreamedCalls(this.#out, request.callables, ids);
    this.#include = request.include;
    this.#response = responseSkeleton(request, ids, request.model);
  }

  /** response.created and response.in_progress. The caller may hold them back until push() first returns events (see the file's comment). */
  start(): ResponsesEvent[] {
    if (this.#state !== 'new') throw new Error('ResponsesStreamWriter.start() called twice');
    this.#begin();
    return this.#flush();
  }

  #begin(): void {
    this.#state = 'started';
    this.#emit({ type: 'response.created', response: snapshot(this.#response) });
    this.#emit({ type: 'response.in_progress', response: snapshot(this.#response) });
  }

  /** The events one chat chunk makes; none for a chunk with nothing to show. */
  push(chunk: ChatCompletionChunk): ResponsesEvent[] {
    if (this.#state === 'new') throw new Error('ResponsesStreamWriter.push() before start()');
    if (this.#state === 'ended') return [];
    if (typeof chunk.model === 'string' && chunk.model) this.#response.model = chunk.model;
    if (chunk.usage) this.#usage = chunk.usage;
    if (typeof chunk.service_tier === 'string') this.#serviceTier = chunk.service_tier;
    // Only one answer is asked for (no `n` in the Responses API): choice 0.
    const choice = chunk.choices?.find((c) => c.index === 0);
    if (!choice) return this.#flush();
    const delta = choice.delta ?? {};
    if (typeof delta.reasoning_content === 'string' && delta.reasoning_content) this.#reasoningDelta(delta.reasoning_content);
    if (Array.isArray(delta.thinking_blocks)) this.#thinking(delta.thinking_blocks);
    if (typeof delta.content === 'string' && delta.content) this.#partDelta('text', delta.content, logprobsOf((choice.logprobs as { content?: unknown } | null)?.content));
    // Citations of the text so far, before a search in the same chunk closes its message (Gemini tells both at the end).
    if (Array.isArray(delta.annotations)) this.#annotate(delta.annotations);
    if (Array.isArray(delta.web_search_calls)) for (const search of delta.web_search_calls) this.#search(search);
    if (typeof delta.refusal === 'string' && delta.refusal) this.#partDelta('refusal', delta.refusal, []);
    if (delta.tool_calls?.length) {
      this.#closeReasoning();
      this.#closeMessage();
      for (const call of delta.tool_calls) this.#calls.delta(call);
    }
    if (choice.finish_reason) this.#finish = choice.finish_reason;
    return this.#flush();
  }

  /** Closes what is open and ends the stream: response.completed, or response.incomplete. */
  end(): ResponsesEvent[] {
    if (this.#state === 'new') throw new Error('ResponsesStreamWriter.end() before start()');
    if (this.#state === 'ended') return [];
    this.#state = 'ended';
    const { status } = statusOf(this.#finish);
    this.#closeReasoning();
    // Signatures that came after the reasoning closed (Gemini signs its text and calls): an item of their own.
    if (this.#encrypted()) {
      this.#closeMessage();
      this.#openReasoning();
      this.#closeReasoning();
    }
    // An answer with no message and no call still answers: an empty message stands for it.
    if (!this.#output.some((item) => item.type !== 'reasoning')) this.#openPart('text');
    this.#closeMessage();
    this.#calls.closeAll(status === 'incomplete');
    const response = snapshot(this.#response);
    finishResponse(response, { output: snapshot(this.#output), finishReason: this.#finish, usage: this.#usage, serviceTier: this.#serviceTier, completedAt: this.#ids.now() });
    this.#emit({ type: status === 'completed' ? 'response.completed' : 'response.incomplete', response });
    return this.#flush();
  }

  /**
   * The stream failed after it began: an `error` event (OpenAI's flat fields, and the error
   * object nested as OpenAI's own servers send it, which the SDK reads first), then
   * response.failed with what was produced, the items still open marked incomplete. Before
   * start() (the caller had no stream to fail), the lifecycle events come first.
   */
  fail(error: GatewayError): ResponsesEvent[] {
    if (this.#state === 'ended') return [];
    if (this.#state === 'new') this.#begin();
    this.#state = 'ended';
    this.#emit({ type: 'error', code: error.code, message: error.message, param: error.param, error: { type: error.type, code: error.code, message: error.message, param: error.param } });
    // The part being written shows what it said so far (its item only holds it once closed).
    if (this.#part && this.#message) this.#message.content[this.#part.index] = partOf(this.#part);
    const response = snapshot(this.#response);
    response.status = 'failed';
    response.error = responseErrorOf(error);
    response.output = snapshot(this.#output).map((item) => (item.status === 'in_progress' ? { ...item, status: 'incomplete' } : item));
    if (this.#usage) response.usage = usageOf(this.#usage);
    this.#emit({ type: 'response.failed', response });
    return this.#flush();
  }

  // ---------------------------------------------------------------- items

  #reasoningDelta(text: string): void {
    this.#unsigned += text;
    const item = this.#reasoning ?? this.#openReasoning();
    if (!item.content.length) {
      item.content.push({ type: 'reasoning_text', text: '' });
      this.#emit({ type: 'response.content_part.added', item_id: item.id, output_index: this.#indexOf(item), content_index: 0, part: { type: 'reasoning_text', text: '' } });
    }
    item.content[0].text += text;
    this.#emit({ type: 'response.reasoning_text.delta', item_id: item.id, output_index: this.#indexOf(item), content_index: 0, delta: text });
  }

  #openReasoning(): ReasoningItem {
    this.#closeMessage();
    const item: ReasoningItem = { type: 'reasoning', id: this.#ids.itemId('rs', this.#output.length), summary: [], content: [], status: 'in_progress' };
    this.#add(item);
    this.#reasoning = item;
    return item;
  }

  /** A signature closes the reasoning text before it into a block (as the non-streamed translation reads them); a redacted block is whole. */
  #thinking(blocks: ThinkingBlock[]): void {
    for (const block of blocks) {
      if (block.type === 'redacted_thinking') this.#signed.push(block);
      else if (block.signature) {
        this.#signed.push({ type: 'thinking', thinking: this.#unsigned + block.thinking, signature: block.signature });
        this.#unsigned = '';
      }
    }
  }

  /** The signed reasoning not yet given, as encrypted_content, when the client asked for it. */
  #encrypted(): string | undefined {
    if (!this.#signed.length || !this.#include.includes(ENCRYPTED_REASONING)) return undefined;
    return encodeReasoning(this.#signed);
  }

  #closeReasoning(): void {
    const item = this.#reasoning;
    if (!item) return;
    this.#reasoning = undefined;
    const encrypted = this.#encrypted();
    if (encrypted) {
      item.encrypted_content = encrypted;
      this.#signed = [];
    }
    if (item.content.length) {
      const at = { item_id: item.id, output_index: this.#indexOf(item), content_index: 0 };
      this.#emit({ type: 'response.reasoning_text.done', ...at, text: item.content[0].text });
      this.#emit({ type: 'response.content_part.done', ...at, part: { ...item.content[0] } });
    }
    this.#done(item);
  }

  /** A search the provider ran: its whole lifecycle at once, since it is only told once it ran. */
  #search(search: WebSearchCall): void {
    this.#closeReasoning();
    this.#closeMessage();
    const item = searchItemOf(search, this.#ids.itemId('ws', this.#output.length), this.#include);
    const done = item.status;
    item.status = 'in_progress';
    this.#add(item);
    const at = { item_id: item.id, output_index: this.#indexOf(item) };
    this.#emit({ type: 'response.web_search_call.in_progress', ...at });
    this.#emit({ type: 'response.web_search_call.searching', ...at });
    if (done === 'completed') this.#emit({ type: 'response.web_search_call.completed', ...at });
    item.status = done;
    this.#emit({ type: 'response.output_item.done', output_index: at.output_index, item: snapshot(item) });
  }

  /** Citations of the text part being written (a citation of text no part holds any more is left out). */
  #annotate(citations: UrlCitation[]): void {
    const part = this.#part;
    const message = this.#message;
    if (part?.kind !== 'text' || !message) return;
    for (const citation of citations) {
      if (citation?.url_citation?.end_index <= part.base) continue;
      const annotation = annotationOf(citation, part.base, part.text.length);
      if (!annotation) continue;
      part.annotations.push(annotation);
      const at = { item_id: message.id, output_index: this.#indexOf(message), content_index: part.index };
      this.#emit({ type: 'response.output_text.annotation.added', ...at, annotation_index: part.annotations.length - 1, annotation });
    }
  }

  #partDelta(kind: OpenPart['kind'], text: string, logprobs: LogProb[]): void {
    this.#closeReasoning();
    const part = this.#part?.kind === kind ? this.#part : this.#openPart(kind);
    const message = this.#message!;
    const at = { item_id: message.id, output_index: this.#indexOf(message), content_index: part.index };
    part.text += text;
    if (kind === 'text') {
      this.#written += text.length;
      part.logprobs.push(...logprobs);
      this.#emit({ type: 'response.output_text.delta', ...at, delta: text, logprobs });
    } else {
      this.#emit({ type: 'response.refusal.delta', ...at, delta: text });
    }
  }

  /** A new part of the message (opening the message first), the one before it closed. */
  #openPart(kind: OpenPart['kind']): OpenPart {
    if (!this.#message) {
      const item: MessageItem = { type: 'message', id: this.#ids.itemId('msg', this.#output.length), role: 'assistant', status: 'in_progress', content: [] };
      this.#add(item);
      this.#message = item;
    }
    this.#closePart();
    const message = this.#message;
    const part: OpenPart = { kind, index: message.content.length, text: '', logprobs: [], annotations: [], base: this.#written };
    message.content.push(partOf(part));
    this.#part = part;
    this.#emit({ type: 'response.content_part.added', item_id: message.id, output_index: this.#indexOf(message), content_index: part.index, part: partOf(part) });
    return part;
  }

  #closePart(): void {
    const part = this.#part;
    const message = this.#message;
    if (!part || !message) return;
    this.#part = undefined;
    const at = { item_id: message.id, output_index: this.#indexOf(message), content_index: part.index };
    if (part.kind === 'text') this.#emit({ type: 'response.output_text.done', ...at, text: part.text, logprobs: [...part.logprobs] });
    else this.#emit({ type: 'response.refusal.done', ...at, refusal: part.text });
    message.content[part.index] = partOf(part);
    this.#emit({ type: 'response.content_part.done', ...at, part: partOf(part) });
  }

  #closeMessage(): void {
    const message = this.#message;
    if (!message) return;
    this.#closePart();
    this.#message = undefined;
    this.#done(message);
  }

  #add(item: OutputItem): void {
    this.#out.add(item);
  }

  /** output_item.done; in an incomplete response the last item is the one cut short. */
  #done(item: OutputItem): void {
    this.#out.done(item, this.#state === 'ended' && statusOf(this.#finish).status === 'incomplete');
  }

  #indexOf(item: OutputItem): number {
    return this.#out.indexOf(item);
  }

  #emit(event: Unsequenced<ResponsesEvent>): void {
    this.#out.emit(event);
  }

  #flush(): ResponsesEvent[] {
    return this.#out.flush();
  }
}

function partOf(part: OpenPart): OutputText | Refusal {
  return part.kind === 'text' ? { type: 'output_text', text: part.text, annotations: [...part.annotations], logprobs: [...part.logprobs] } : { type: 'refusal', refusal: part.text };
}

/**
 * One event as SSE, named as OpenAI names it. A Responses stream has no `data: [DONE]`: it
 * ends after response.completed, response.incomplete or response.failed.
 */
export function toSse(event: ResponsesEvent): string {
  return `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}
