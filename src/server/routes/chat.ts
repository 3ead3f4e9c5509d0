/**
 * POST /v1/chat/completions: runs the current generation's pipeline and writes its answer (JSON,
 * or SSE once the stream's first chunk exists) or the error envelope; then the stages'
 * onResponse hooks (the log line) run, whatever happened.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError, toGatewayError } from '../../errors.ts';
import type { Attempt } from '../../pipeline/attempt.ts';
import { UpstreamError } from '../../providers/upstream-error.ts';
import { MAX_JSON_DEPTH, tooDeep } from '../../protocol/depth.ts';
import { createContext } from '../context.ts';
import { responseHeaders, sendError, sendJson, sendStream } from '../respond.ts';
import type { RouteModule, ServerDeps } from '../surface.ts';
import type { Runtime } from '../../runtime/build.ts';
import type { RequestContext } from '../../plugin-api.ts';

export const CHAT_PATHS = ['/v1/chat/completions', '/chat/completions'] as const;

export const chatRoutes: RouteModule = {
  surface: [{ pattern: /^\/(v1\/)?chat\/completions\/?$/, method: 'POST' }],
  register(app, deps) {
    const handler = chat(deps);
    for (const path of CHAT_PATHS) app.post(path, handler);
  },
};

function chat({ getRuntime, onRequestStart, onRequestDone, log, observer }: ServerDeps) {
  return async function chat(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    reply.hijack();
    const runtime = getRuntime();
    runtime.lifecycle.inFlight++;
    const res = reply.raw;
    const ctx = createContext(request.id, request.raw, res, request.body, log);
    onRequestStart?.(ctx);
    observer.requestStarted?.(ctx);
    const toClientError = (err: unknown): GatewayError => (err instanceof UpstreamError ? err.toClientError(runtime.redact) : toGatewayError(err).redacted(runtime.redact));
    try {
      const deep = tooDeep(request.body);
      if (deep) throw new GatewayError('invalid_request', `Invalid '${deep}': JSON nested deeper than ${MAX_JSON_DEPTH} levels is not accepted.`, { param: deep });
      await runtime.run(ctx);
      const attempt = ctx.attempt as Attempt | undefined;
      if (!attempt) throw new GatewayError('internal_error', 'the pipeline answered without an attempt');
      const response = await attempt.complete();
      if (response.kind === 'completion') {
        ctx.status = 200;
        const headers = responseHeaders(ctx);
        if (typeof ctx.costUsd === 'number') headers['x-switchyard-cost-usd'] = String(ctx.costUsd);
        sendJson(res, 200, headers, response.body);
      } else {
        await sendStream(res, ctx, response.chunks, toClientError);
      }
    } catch (err) {
      if (ctx.signal.aborted) {
        ctx.status = 499; // client closed the request (nginx's convention), for the log only
      } else {
        const error = toClientError(err);
        if (error.code === 'internal_error') log.error({ err, reqId: ctx.id }, 'unhandled error in the pipeline');
        sendError(res, ctx, error);
      }
    } finally {
      (ctx.attempt as Attempt | undefined)?.close();
      runtime.lifecycle.inFlight--;
      onRequestDone?.(runtime, ctx);
      void settle(runtime, ctx).then(() => observer.requestEnded?.(ctx));
    }
  };
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
