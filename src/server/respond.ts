/**
 * Writing answers to the client: JSON completions, SSE streams (written per turn of the event
 * loop, with backpressure), and errors in the OpenAI envelope. Every response carries x-request-id.
 */
import type { ServerResponse } from 'node:http';
import type { RequestContext } from '../plugin-api.ts';
import type { ChatCompletionChunk, ChatCompletionRequest } from '../openai-types.ts';
import type { GatewayError } from '../errors.ts';
import { SSE_DONE, SSE_HEADERS, sseData } from '../protocol/sse.ts';
import { attemptCount } from '../pipeline/attempts.ts';
import { addTimingHeaders } from '../observability/timing.ts';
import { SseWriter } from './sse-writer.ts';

const JSON_TYPE = 'application/json; charset=utf-8';

export function responseHeaders(ctx: RequestContext): Record<string, string> {
  const headers: Record<string, string> = { 'x-request-id': ctx.id, ...ctx.responseHeaders };
  if (ctx.attempt) headers['x-switchyard-provider'] = ctx.attempt.target.provider;
  const tried = attemptCount(ctx);
  if (tried) headers['x-switchyard-attempts'] = String(tried);
  addTimingHeaders(headers, ctx);
  return headers;
}

export function sendJson(res: ServerResponse, status: number, headers: Record<string, string>, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { ...headers, 'content-type': JSON_TYPE, 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

export function sendError(res: ServerResponse, ctx: RequestContext, error: GatewayError): void {
  ctx.status = error.status;
  ctx.error = error;
  if (res.headersSent) {
    res.end();
    return;
  }
  sendJson(res, error.status, { ...responseHeaders(ctx), ...error.headers }, error.toJSON());
}

/**
 * Streams chunks as SSE. The caller primed the stream, so headers go out only once a first chunk
 * exists. Without `stream_options.include_usage` the usage the gateway asked the upstream for
 * (to log tokens) is kept from the client. Returns when the stream ended or the client left.
 */
export async function sendStream(res: ServerResponse, ctx: RequestContext, chunks: AsyncIterable<ChatCompletionChunk>, toClientError: (err: unknown) => GatewayError): Promise<void> {
  const wantsUsage = (ctx.body as ChatCompletionRequest).stream_options?.include_usage === true;
  ctx.status = 200;
  // The first chunk is ready: time to first token is known before the headers go out (Server-Timing).
  ctx.timing.firstChunkMs = performance.now() - ctx.startedAt;
  res.writeHead(200, { ...responseHeaders(ctx), ...SSE_HEADERS });
  res.socket?.setNoDelay(true);
  const out = new SseWriter(res);
  out.start();
  try {
    const delivered = (ctx.delivered = { chars: 0 });
    for await (const chunk of chunks) {
      for (const choice of chunk.choices) delivered.chars += deltaLength(choice.delta);
      if (!wantsUsage && 'usage' in chunk) {
        if (chunk.usage && chunk.choices.length === 0) continue;
        delete chunk.usage;
      }
      if (!out.write(sseData(chunk))) await out.drained(ctx.signal);
    }
  } catch (err) {
    if (!ctx.signal.aborted) {
      // Bytes already reached the client: the failure can only be reported inside the stream.
      const error = toClientError(err);
      ctx.streamError = error;
      out.write(sseData(error.toJSON()));
    }
  }
  // A client that left mid-stream is logged as such (nginx's 499), not as a success.
  if (ctx.signal.aborted) ctx.status = 499;
  else out.end(SSE_DONE);
}

/** Characters of content, reasoning and tool arguments in one delta (to charge an abandoned stream). */
export function deltaLength(delta: ChatCompletionChunk['choices'][number]['delta'] | undefined): number {
  if (!delta) return 0;
  let n = typeof delta.content === 'string' ? delta.content.length : 0;
  if (typeof delta.reasoning_content === 'string') n += delta.reasoning_content.length;
  if (delta.tool_calls) for (const call of delta.tool_calls) n += call.function?.arguments?.length ?? 0;
  return n;
}
