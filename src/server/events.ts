/**
 * Writing a protocol's own event stream (Responses, Anthropic Messages) from the pipeline's chunk
 * stream: events a writer produces before the first output are held, so that the answer starts
 * only when there is something to say; backpressure as for chat; a failure after the start is
 * told inside the stream; a client that leaves is logged as 499.
 */
import type { ServerResponse } from 'node:http';
import type { GatewayError } from '../errors.ts';
import type { ChatCompletionChunk } from '../openai-types.ts';
import type { RequestContext } from '../plugin-api.ts';
import { SSE_HEADERS } from '../protocol/sse.ts';
import { deltaLength, responseHeaders } from './respond.ts';
import { SseWriter } from './sse-writer.ts';

export interface EventWriter<E> {
  /** Events for one chunk (possibly none). */
  push(chunk: ChatCompletionChunk): E[];
  end(): E[];
  fail(error: GatewayError): E[];
  toSse(event: E): string;
  /** Does this event say something about the answer (the point after which the stream is committed)? */
  isOutput(event: E): boolean;
}

/**
 * @param opening events to send first (held with the rest until the first output event)
 * @param failEarly answers a failure that happens before anything was sent (a plain HTTP error)
 */
export async function writeEventStream<E>(
  res: ServerResponse,
  ctx: RequestContext,
  chunks: AsyncIterable<ChatCompletionChunk>,
  writer: EventWriter<E>,
  opening: E[],
  toClientError: (err: unknown) => GatewayError,
  failEarly: (error: GatewayError) => void,
): Promise<void> {
  let held: E[] | undefined = opening;
  const out = new SseWriter(res);
  const commit = (): void => {
    held = undefined;
    ctx.status = 200;
    ctx.timing.firstChunkMs = performance.now() - ctx.startedAt;
    res.writeHead(200, { ...responseHeaders(ctx), ...SSE_HEADERS });
    res.socket?.setNoDelay(true);
    out.start();
  };
  const send = async (events: E[], final = false): Promise<void> => {
    if (held) {
      held.push(...events);
      if (!final && !events.some((e) => writer.isOutput(e))) return;
      events = held;
      commit();
    }
    if (events.length === 0) return;
    let text = '';
    for (const e of events) text += writer.toSse(e);
    if (!out.write(text)) await out.drained(ctx.signal);
  };
  const delivered = (ctx.delivered = { chars: 0 });
  try {
    for await (const chunk of chunks) {
      for (const choice of chunk.choices) delivered.chars += deltaLength(choice.delta);
      await send(writer.push(chunk));
    }
    // An answer with no output at all still gets its opening and closing events.
    await send(writer.end(), true);
  } catch (err) {
    if (!ctx.signal.aborted) {
      const error = toClientError(err);
      if (held) {
        failEarly(error);
        return;
      }
      ctx.streamError = error;
      let text = '';
      for (const e of writer.fail(error)) text += writer.toSse(e);
      out.write(text);
    }
  }
  if (ctx.signal.aborted) ctx.status = 499;
  else out.end();
}
