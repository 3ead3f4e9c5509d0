/**
 * The fastify application. Routes read the config generation current when the request arrives
 * (`getRuntime()`), so a reload never changes a request midway.
 */
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { Runtime } from '../runtime/build.ts';
import { GatewayError, toGatewayError } from '../errors.ts';
import { UpstreamError } from '../providers/upstream-error.ts';
import { primeStream } from '../protocol/prime.ts';
import type { RequestContext } from '../plugin-api.ts';
import { authenticate } from '../stages/auth.ts';
import { createContext, requestIdFor } from './context.ts';
import { responseHeaders, sendError, sendJson, sendStream } from './respond.ts';
import { allowedMethod, CHAT_PATHS, MODELS_PATHS } from './routes.ts';

export interface AppOptions {
  getRuntime(): Runtime;
  /** Called when a chat request that ran on `runtime` has finished (for draining old generations). */
  onRequestDone?(runtime: Runtime): void;
  log: Logger;
  bodyLimit: number;
  /** Extra readiness details (e.g. the last reload's outcome). */
  readiness?(): Record<string, unknown>;
}

export function buildApp(options: AppOptions): FastifyInstance {
  const { getRuntime, log } = options;
  const app = Fastify({
    logger: false,
    bodyLimit: options.bodyLimit,
    genReqId: requestIdFor,
    // Streams can be long; idle keep-alive sockets are cheap.
    keepAliveTimeout: 75_000,
    // While draining, requests arriving on open keep-alive connections are still served (with
    // Connection: close) instead of fastify's non-OpenAI 503 body.
    return503OnClosing: false,
  });

  // Chat requests are JSON only: without this fastify would also accept text/plain bodies.
  app.removeContentTypeParser('text/plain');

  const toClientError = (err: unknown): GatewayError => (err instanceof UpstreamError ? err.toClientError(getRuntime().redact) : toGatewayError(err));

  async function chat(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    reply.hijack();
    const runtime = getRuntime();
    runtime.lifecycle.inFlight++;
    const res = reply.raw;
    const ctx = createContext(request.id, request.raw, res, request.body, log);
    try {
      await runtime.run(ctx);
      const response = ctx.response;
      if (!response) throw new GatewayError('internal_error', 'the pipeline produced no response (is "transform-response" in the pipeline?)');
      if (response.kind === 'completion') {
        ctx.status = 200;
        sendJson(res, 200, responseHeaders(ctx), response.body);
      } else {
        await sendStream(res, ctx, await primeStream(response.chunks), toClientError);
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
      runtime.lifecycle.inFlight--;
      options.onRequestDone?.(runtime);
      void runtime.finish(ctx);
    }
  }
  for (const path of CHAT_PATHS) app.post(path, chat);

  async function listModels(request: FastifyRequest, reply: FastifyReply) {
    const runtime = getRuntime();
    const allows = visibleModels(request, runtime);
    const data = [...runtime.models.values()].filter((m) => allows(m.name)).map((m) => modelObject(runtime, m.name));
    reply.header('x-request-id', request.id).send({ object: 'list', data });
  }
  async function getModel(request: FastifyRequest<{ Params: { model: string } }>, reply: FastifyReply) {
    const runtime = getRuntime();
    const name = request.params.model;
    if (!runtime.models.has(name) || !visibleModels(request, runtime)(name)) {
      throw new GatewayError('model_not_found', `The model \`${name}\` does not exist or you do not have access to it.`, { param: 'model' });
    }
    reply.header('x-request-id', request.id).send(modelObject(runtime, name));
  }
  for (const path of MODELS_PATHS) {
    app.get(path, listModels);
    app.get(`${path}/:model`, getModel);
  }

  app.get('/healthz', async (request, reply) => {
    reply.header('x-request-id', request.id).send({ status: 'ok' });
  });
  app.get('/readyz', async (request, reply) => {
    const runtime = getRuntime();
    const providers: Record<string, { status: string; reason?: string }> = {};
    for (const [name, h] of runtime.providers) providers[name] = h.unavailable ? { status: 'unavailable', reason: h.unavailable } : { status: 'ready' };
    reply.header('x-request-id', request.id).send({
      status: 'ready',
      generation: runtime.generation,
      config: runtime.file,
      models: [...runtime.models.keys()],
      providers,
      ...options.readiness?.(),
    });
  });

  app.setNotFoundHandler((request, reply) => {
    const allowed = allowedMethod(request.url);
    const error = allowed
      ? new GatewayError('method_not_allowed', `Method ${request.method} is not allowed on ${request.url.split('?')[0]}; use ${allowed}.`)
      : new GatewayError('not_found', `Unknown request URL: ${request.method} ${request.url.split('?')[0]}. Chat completions are at POST /v1/chat/completions.`);
    if (allowed) reply.header('allow', allowed);
    reply.code(error.status).header('x-request-id', request.id).send(error.toJSON());
  });

  app.setErrorHandler((err: Error & { code?: string; statusCode?: number }, request, reply) => {
    const error = fromFastifyError(err);
    if (error.code === 'internal_error') log.error({ err, reqId: request.id }, 'unhandled error');
    // Body-parsing failures happen before the pipeline: log them like any other request.
    if (request.routeOptions.url && CHAT_PATHS.includes(request.routeOptions.url as never)) {
      const ctx: RequestContext = createContext(request.id, request.raw, reply.raw, undefined, log);
      ctx.status = error.status;
      ctx.error = error;
      void getRuntime().finish(ctx);
    }
    reply.code(error.status).headers({ 'x-request-id': request.id, ...error.headers }).send(error.toJSON());
  });

  return app;
}

function fromFastifyError(err: Error & { code?: string; statusCode?: number }): GatewayError {
  if (err instanceof GatewayError) return err;
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new GatewayError('request_too_large', 'The request body is larger than this gateway accepts (server.bodyLimit).');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new GatewayError('unsupported_media_type', 'The request body must be JSON, sent with "Content-Type: application/json".');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new GatewayError('invalid_json', 'The request body is empty; send a JSON object.');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new GatewayError('invalid_json', 'The request body does not match its Content-Length.');
  }
  if (err.statusCode === 400) return new GatewayError('invalid_json', `The request body is not valid JSON: ${err.message}`);
  return toGatewayError(err);
}

function visibleModels(request: FastifyRequest, runtime: Runtime): (model: string) => boolean {
  // With the built-in auth stage in the pipeline, listing models needs a key too.
  if (!runtime.stages.some((s) => s.name === 'auth')) return () => true;
  const key = authenticate(request.headers, runtime);
  return (model) => key.allows(model);
}

function modelObject(runtime: Runtime, name: string) {
  const route = runtime.models.get(name)!;
  return { id: name, object: 'model', created: runtime.createdAt, owned_by: route.targets[0]?.provider ?? 'switchyard' };
}
