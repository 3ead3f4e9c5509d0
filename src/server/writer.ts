/**
 * The one writer of answers: JSON, event streams and errors, in the protocol of the request's
 * session. Every answer carries x-request-id, the protocol's own headers, the stages' and the
 * limits' headers, which provider answered and after how many attempts, and the timing headers.
 */
import type { ServerResponse } from 'node:http';
import type { GatewayError } from '../errors.ts';
import type { ChatCompletionChunk } from '../openai-types.ts';
import { addTimingHeaders } from '../observability/timing.ts';
import type { Exchange, SseEvents } from '../pipeline/exchange.ts';
import type { GatewayResponse } from '../plugin-api.ts';
import { droppedHeader } from '../pipeline/drops.ts';
import { deltaLength } from '../protocol/delivered.ts';
import { SSE_HEADERS } from '../protocol/sse.ts';
import { SseWriter } from './sse-writer.ts';

const JSON_TYPE = 'application/json; charset=utf-8';

export function responseHeaders(x: Exchange): Record<string, string> {
  const headers: Record<string, string> = { 'x-request-id': x.id, ...x.session?.headers, ...x.responseHeaders };
  if (x.attempt) headers['x-switchyard-provider'] = x.attempt.target.provider;
  const tried = x.triedCount;
  if (tried) headers['x-switchyard-attempts'] = String(tried);
  const dropped = x.dropped;
  if (dropped) headers['x-switchyard-dropped'] = droppedHeader(dropped);
  addTimingHeaders(headers, x);
  return headers;
}

/** Sends `body` as JSON; `headers` is the caller's own fresh object: the body's type and length are added to it, not to a copy. */
export function sendJson(res: ServerResponse, status: number, headers: Record<string, string | number>, body: unknown): void {
  const text = JSON.stringify(body);
  headers['content-type'] = JSON_TYPE;
  headers['content-length'] = Buffer.byteLength(text);
  res.writeHead(status, headers);
  res.end(text);
}

/** The pipeline's answer, in the client's protocol. */
export async function writeAnswer(x: Exchange, response: GatewayResponse, toClientError: (err: unknown) => GatewayError): Promise<void> {
  const attempt = x.attempt;
  const session = x.session;
  if (!attempt || !session) throw new Error('an answer needs an attempt and a session');
  if (response.kind === 'stream') {
    if (!session.events) throw new Error(`the ${x.ingress} protocol cannot stream`);
    await writeStream(x, response.chunks, session.events(attempt), toClientError);
    return;
  }
  x.status = 200;
  const body = await session.answer(response, attempt, x.responseHeaders);
  const headers = responseHeaders(x);
  if (typeof x.costUsd === 'number') headers['x-switchyard-cost-usd'] = String(x.costUsd);
  sendJson(x.res, 200, headers, body);
}

/** An error answer in the request's protocol; once a response has started, only its end. */
export function writeError(x: Exchange, error: GatewayError): void {
  x.status = error.status;
  x.error = error;
  const res = x.res;
  if (res.headersSent) {
    res.end();
    return;
  }
  const answer = x.errorAnswer(error, x.id);
  x.status = answer.status;
  sendJson(res, answer.status, Object.assign(responseHeaders(x), error.headers, answer.headers), answer.body);
}

/**
 * Writes a primed chunk stream in the protocol's events, with backpressure. Text before the
 * events say something about the answer is held, so that a failure then is still a plain HTTP
 * error; a failure after the start is told inside the stream; a client that leaves is logged as
 * 499 (nginx's convention). Returns when the stream ended or the client left.
 */
async function writeStream(x: Exchange, chunks: AsyncIterable<ChatCompletionChunk>, events: SseEvents, toClientError: (err: unknown) => GatewayError): Promise<void> {
  const res = x.res;
  const out = new SseWriter(res);
  let held: string | undefined = '';
  const commit = (text: string): string => {
    const all = held + text;
    held = undefined;
    x.status = 200;
    // The first output is ready: time to first token is known before the headers go out (Server-Timing).
    x.timing.firstChunkMs = performance.now() - x.startedAt;
    const headers: Record<string, string> = { ...responseHeaders(x), ...SSE_HEADERS };
    if (events.contentType) headers['content-type'] = events.contentType;
    res.writeHead(200, headers);
    res.socket?.setNoDelay(true);
    out.start();
    return all;
  };
  const delivered = (x.delivered = { chars: 0 });
  try {
    for await (const chunk of chunks) {
      // An index, not for-of: here (a loop resumed once per event) for-of made an array iterator every event.
      const choices = chunk.choices;
      for (let i = 0; i < choices.length; i++) delivered.chars += deltaLength(choices[i].delta);
      let text = events.push(chunk);
      if (held !== undefined) {
        if (!events.started) {
          held += text;
          continue;
        }
        text = commit(text);
      }
      if (text && !out.write(text, events.byteLengthOf?.(text))) await out.drained(x.signal);
    }
    // An answer with no output at all still gets its opening and closing events.
    let tail = await events.end();
    if (held !== undefined) tail = commit(tail);
    out.write(tail);
  } catch (err) {
    if (!x.signal.aborted) {
      const error = toClientError(err);
      if (held !== undefined) {
        writeError(x, error);
        return;
      }
      x.streamError = error;
      out.write(events.fail(error));
    }
  }
  if (x.signal.aborted) x.status = 499;
  else out.end();
}
