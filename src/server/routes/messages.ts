/**
 * POST /v1/messages (Anthropic Messages API) and /v1/messages/count_tokens: translated to chat
 * and back, so any provider serves Anthropic clients (Claude Code, the Anthropic SDKs) through
 * the same pipeline (src/ingress/messages). Keys come as `x-api-key` (what the SDKs send) or a
 * bearer token; every answer carries Anthropic's `request-id`; errors are Anthropic's envelope,
 * so the SDK raises its own classes.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ServerResponse } from 'node:http';
import { GatewayError, toGatewayError } from '../../errors.ts';
import { anthropicErrorOf, chatToMessage, countTokens, MessagesStreamWriter, toSse, translateMessagesRequest, type AnthropicEvent } from '../../ingress/messages/index.ts';
import type { ChatCompletion } from '../../openai-types.ts';
import type { RequestContext, RouteTarget } from '../../plugin-api.ts';
import { UpstreamError } from '../../providers/upstream-error.ts';
import type { Attempt } from '../../pipeline/attempt.ts';
import type { SseJsonEvent } from '../../providers/http-provider.ts';
import { writeEventStream, type EventWriter } from '../events.ts';
import { servePipeline, type IngressProtocol } from '../ingress.ts';
import { responseHeaders, sendJson } from '../respond.ts';
import type { RouteModule, ServerDeps } from '../surface.ts';

const PATHS = ['/v1/messages', '/messages'] as const;

/** The client's Messages body, per request context (the answer echoes its model and stop sequences). */
const bodies = new WeakMap<RequestContext, Record<string, unknown>>();

/** Anthropic's error envelope with the gateway's headers (Retry-After, x-should-retry) and its request-id. */
function sendAnthropicError(res: ServerResponse, ctx: RequestContext, error: GatewayError): void {
  ctx.status = error.status;
  ctx.error = error;
  if (res.headersSent) {
    res.end();
    return;
  }
  const { status, body } = anthropicErrorOf(error, { requestId: ctx.id });
  sendJson(res, status, { ...responseHeaders(ctx), ...error.headers, 'request-id': ctx.id }, body);
}

const messages: IngressProtocol = {
  name: 'messages',
  operation: 'chat',
  toPipeline(body, ctx) {
    const { chat, nativeOnly } = translateMessagesRequest(body);
    bodies.set(ctx, body as Record<string, unknown>);
    // An `anthropic` target gets the body as sent; any other the translation, unless it needs
    // what only Anthropic has (server tools, Files API sources...): that target refuses it.
    ctx.nativeRequest = { protocol: 'anthropic-messages', body: body as Record<string, unknown>, headers: anthropicHeaders(ctx.headers), untranslatable: nativeOnly };
    return chat;
  },
  answer(completion, ctx) {
    ctx.responseHeaders['request-id'] = ctx.id;
    const attempt = ctx.attempt;
    if (attempt?.passthrough && attempt.native?.kind === 'json') return attempt.native.body;
    return chatToMessage(completion as ChatCompletion, bodies.get(ctx)! as never);
  },
  stream(res, ctx, chunks, toClientError) {
    ctx.responseHeaders['request-id'] = ctx.id;
    if (ctx.attempt?.passthrough) return writeEventStream(res, ctx, chunks, nativeEvents(ctx), [], toClientError, (error) => sendAnthropicError(res, ctx, error));
    const writer = new MessagesStreamWriter(bodies.get(ctx)! as never);
    const events: EventWriter<AnthropicEvent> = {
      push: (chunk) => writer.push(chunk),
      end: () => writer.end(),
      fail: (error) => writer.fail(error),
      toSse,
      // message_start and ping are held until the first content block, so failover stays possible.
      isOutput: (e) => e.type !== 'message_start' && e.type !== 'ping',
    };
    return writeEventStream(res, ctx, chunks, events, [], toClientError, (error) => sendAnthropicError(res, ctx, error));
  },
  error: sendAnthropicError,
};

/** The client's Anthropic protocol headers worth passing to an Anthropic upstream. */
function anthropicHeaders(headers: RequestContext['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of ['anthropic-version', 'anthropic-beta']) {
    const v = headers[name];
    if (typeof v === 'string' && v) out[name] = v;
  }
  return out;
}

/**
 * A passed-through stream: the upstream's own events, in order, as the translation (which still
 * runs, for usage and cost) consumes them; the chunks only pace the writing.
 */
function nativeEvents(ctx: RequestContext): EventWriter<SseJsonEvent> {
  const attempt = ctx.attempt as Attempt;
  const take = () => attempt.takeNativeEvents() as SseJsonEvent[];
  return {
    push: take,
    end: take,
    fail: (error) => [{ event: 'error', data: { type: 'error', error: anthropicErrorOf(error).body.error } }],
    toSse: (e) => `event: ${e.event ?? (e.data as { type?: string })?.type ?? 'message'}\ndata: ${JSON.stringify(e.data)}\n\n`,
    isOutput: (e) => e.event !== 'message_start' && e.event !== 'ping',
  };
}

export const messagesRoutes: RouteModule = {
  surface: [
    { pattern: /^\/(v1\/)?messages\/?$/, method: 'POST' },
    { pattern: /^\/(v1\/)?messages\/count_tokens\/?$/, method: 'POST' },
  ],
  register(app, deps) {
    const handler = servePipeline(deps, messages);
    const count = countTokensHandler(deps);
    for (const path of PATHS) {
      app.post(path, handler);
      app.post(`${path}/count_tokens`, count);
    }
  },
};

/**
 * count_tokens, after the same key and model checks as a request: exact when the alias's first
 * available target is an Anthropic provider (it counts, `x-switchyard-token-count: exact`), an
 * estimate from the translated request otherwise (`estimate`).
 */
function countTokensHandler({ getRuntime, log }: ServerDeps) {
  return async function countTokensRoute(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const runtime = getRuntime();
    const headers = { 'x-request-id': request.id, 'request-id': request.id };
    try {
      const key = runtime.identify?.(request.headers);
      const model = (request.body as { model?: unknown } | undefined)?.model;
      if (typeof model !== 'string' || !runtime.models.has(model))
        throw new GatewayError('model_not_found', `The model \`${String(model)}\` does not exist or you do not have access to it.`, { param: 'model' });
      if (key && !key.allows(model)) throw new GatewayError('model_not_allowed', `The key "${key.name}" may not use the model "${model}".`, { param: 'model' });
      const target = runtime.models.get(model)!.targets.find((t) => !t.unavailable);
      if (target?.capabilities.nativeProtocols?.includes(COUNT_TOKENS)) {
        reply.headers({ ...headers, 'x-switchyard-token-count': 'exact' }).send(await countUpstream(target, request, reply, runtime.upstreamBodyLimit, log));
        return;
      }
      reply.headers({ ...headers, 'x-switchyard-token-count': 'estimate' }).send(countTokens(request.body));
    } catch (err) {
      const error = (err instanceof UpstreamError ? err.toClientError(runtime.redact) : toGatewayError(err)).redacted(runtime.redact);
      if (error.code === 'internal_error') log.error({ err, reqId: request.id }, 'count_tokens failed');
      const { status, body } = anthropicErrorOf(error, { requestId: request.id });
      reply
        .code(status)
        .headers({ ...headers, ...error.headers })
        .send(body);
    }
  };
}

/** The native protocol a provider declares when it can count a Messages request itself. */
const COUNT_TOKENS = 'anthropic-count-tokens';

/** Asks the provider to count: the client's body, with the target's model, as a native request. */
async function countUpstream(target: RouteTarget, request: FastifyRequest, reply: FastifyReply, maxResponseBytes: number, log: ServerDeps['log']): Promise<unknown> {
  // The client leaving (the response closed before it finished) abandons the count.
  const controller = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) controller.abort();
  });
  const body = request.body as Record<string, unknown>;
  const answer = await target.instance.send({
    provider: target.provider,
    model: target.model,
    request: { model: target.model, messages: [] },
    stream: false,
    signal: controller.signal,
    requestId: request.id,
    log,
    dropUnsupportedParams: target.dropUnsupportedParams,
    timeouts: target.timeouts,
    maxResponseBytes,
    native: { protocol: COUNT_TOKENS, body, headers: anthropicHeaders(request.headers) },
  });
  return answer.kind === 'json' ? answer.body : undefined;
}
