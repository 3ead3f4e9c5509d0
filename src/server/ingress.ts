/**
 * One handler for every way in (chat, embeddings, Responses, Anthropic Messages): the client's
 * body becomes the request the pipeline runs, the same pipeline runs it (keys, aliases,
 * routing, retries, fallbacks, limits, cost, log line, metrics), and the answer or error goes
 * back in the client's protocol. After the response, limits and spend are settled and the
 * stages' onResponse hooks (the log line) run, whatever happened.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ServerResponse } from 'node:http';
import { GatewayError, toGatewayError } from '../errors.ts';
import type { ChatCompletion, ChatCompletionChunk, EmbeddingResponse } from '../openai-types.ts';
import type { Attempt } from '../pipeline/attempt.ts';
import type { GatewayResponse, Ingress, Operation, RequestContext } from '../plugin-api.ts';
import { MAX_JSON_DEPTH, tooDeep } from '../protocol/depth.ts';
import { UpstreamError } from '../providers/upstream-error.ts';
import type { Runtime } from '../runtime/build.ts';
import { createContext } from './context.ts';
import { responseHeaders, sendError, sendJson } from './respond.ts';
import type { ServerDeps } from './surface.ts';

/** How one protocol enters and leaves the pipeline. */
export interface IngressProtocol {
  name: Ingress;
  operation: Operation;
  /** The client's body → the pipeline's request; throws a GatewayError (400) for bad input. */
  toPipeline(body: unknown, ctx: RequestContext): RequestContext['body'];
  /** A non-streamed answer → the client's JSON. */
  answer(response: ChatCompletion | EmbeddingResponse, ctx: RequestContext): unknown;
  /** Writes a primed chunk stream in the protocol's own events (absent: the protocol has no streams). */
  stream?(res: ServerResponse, ctx: RequestContext, chunks: AsyncIterable<ChatCompletionChunk>, toClientError: (err: unknown) => GatewayError): Promise<void>;
  /** Writes an error in the protocol's shape (default: the OpenAI envelope). */
  error?(res: ServerResponse, ctx: RequestContext, error: GatewayError): void;
}

export function servePipeline({ getRuntime, onRequestStart, onRequestDone, log, observer }: ServerDeps, ingress: IngressProtocol) {
  const sendFailure = ingress.error ?? sendError;
  return async function pipeline(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    reply.hijack();
    const runtime = getRuntime();
    runtime.lifecycle.inFlight++;
    const res = reply.raw;
    const ctx = createContext(request.id, request.raw, res, request.body, log, ingress.operation, ingress.name);
    onRequestStart?.(ctx);
    observer.requestStarted?.(ctx);
    const toClientError = (err: unknown): GatewayError => (err instanceof UpstreamError ? err.toClientError(runtime.redact) : toGatewayError(err).redacted(runtime.redact));
    try {
      const deep = tooDeep(request.body);
      if (deep) throw new GatewayError('invalid_request', `Invalid '${deep}': JSON nested deeper than ${MAX_JSON_DEPTH} levels is not accepted.`, { param: deep });
      if (ingress.name !== 'chat') ctx.body = ingress.toPipeline(request.body, ctx);
      await runtime.run(ctx);
      const attempt = ctx.attempt as Attempt | undefined;
      if (!attempt) throw new GatewayError('internal_error', 'the pipeline answered without an attempt');
      await write(res, ctx, await attempt.complete(), ingress, toClientError);
    } catch (err) {
      if (ctx.signal.aborted) {
        ctx.status = 499; // client closed the request (nginx's convention), for the log only
      } else {
        const error = toClientError(err);
        if (error.code === 'internal_error') log.error({ err, reqId: ctx.id }, 'unhandled error in the pipeline');
        sendFailure(res, ctx, error);
      }
    } finally {
      (ctx.attempt as Attempt | undefined)?.close();
      runtime.lifecycle.inFlight--;
      onRequestDone?.(runtime, ctx);
      void settle(runtime, ctx).then(() => observer.requestEnded?.(ctx));
    }
  };
}

async function write(res: ServerResponse, ctx: RequestContext, response: GatewayResponse, ingress: IngressProtocol, toClientError: (err: unknown) => GatewayError): Promise<void> {
  if (response.kind === 'stream') {
    if (!ingress.stream) throw new GatewayError('internal_error', `the ${ingress.name} protocol cannot stream`);
    await ingress.stream(res, ctx, response.chunks, toClientError);
    return;
  }
  ctx.status = 200;
  const body = ingress.answer(response.body, ctx);
  const headers = responseHeaders(ctx);
  if (typeof ctx.costUsd === 'number') headers['x-switchyard-cost-usd'] = String(ctx.costUsd);
  sendJson(res, 200, headers, body);
}

/** After the response: limits and spend are settled first (the log line carries the final cost), then the stages' hooks. */
async function settle(runtime: Runtime, ctx: RequestContext): Promise<void> {
  try {
    await runtime.governor?.finish(ctx);
  } catch (err) {
    ctx.log.error({ err, reqId: ctx.id }, 'settling limits and spend failed');
  }
  await runtime.finish(ctx);
}
