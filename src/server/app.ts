/**
 * The fastify application: the route modules, plus OpenAI-shaped answers for everything that
 * happens outside them (unknown URLs, wrong methods, body parsing failures).
 */
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import { BodyBudget, bodyBytesOf, discardUnreadBody } from './body-intake.ts';
import { handleClientError } from './client-errors.ts';
import { GatewayError, toGatewayError } from '../errors.ts';
import type { Protocol } from '../ingress/protocol.ts';
import { PROTOCOLS } from '../ingress/protocols.ts';
import { requestIdFor } from './request-id.ts';
import { refuseUnread } from './serve.ts';
import { adminRoutes } from './routes/admin.ts';
import { consoleRoutes } from './routes/console.ts';
import { protocolRoutes } from './routes/protocols.ts';
import { healthRoutes } from './routes/health.ts';
import { metricsRoutes } from './routes/metrics.ts';
import { modelRoutes } from './routes/models.ts';
import { geminiModelRoutes } from '../ingress/gemini/models.ts';
import { googleErrorOf } from '../ingress/gemini/errors.ts';
import { isGeminiUrl } from '../ingress/gemini/protocol.ts';
import { responseRoutes } from './routes/responses.ts';
import { conversationRoutes } from './routes/conversations.ts';
import type { RouteModule, ServerDeps } from './surface.ts';

export interface AppOptions extends ServerDeps {
  bodyLimit: number;
  /** Bytes of request bodies received and held at once (`server.inFlightBodyLimit`, resolved). */
  inFlightBodyLimit: number;
  /** Client timeouts (restart-only settings of `server:`). */
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  /** The ways in; PROTOCOLS unless an embedder adds its own. */
  protocols?: readonly Protocol[];
}

const OTHER_ROUTES: readonly RouteModule[] = [modelRoutes, geminiModelRoutes, responseRoutes, conversationRoutes, healthRoutes, metricsRoutes, adminRoutes, consoleRoutes];

/** The allowed method when the path exists, else undefined. */
function allowedMethod(routes: readonly RouteModule[], url: string): string | undefined {
  const path = url.split('?')[0];
  for (const route of routes) for (const { pattern, method } of route.surface) if (pattern.test(path)) return method;
  return undefined;
}

export function buildApp(options: AppOptions): FastifyInstance {
  const { getRuntime, log } = options;
  const protocols = options.protocols ?? PROTOCOLS;
  const routes = [protocolRoutes(protocols), ...OTHER_ROUTES];
  const protocolAt = new Map(protocols.flatMap((p) => p.paths.map((path) => [path, p] as const)));
  const app = Fastify({
    logger: false,
    bodyLimit: options.bodyLimit,
    genReqId: (req) => requestIdFor(req, getRuntime().redact),
    // Streams can be long; idle keep-alive sockets are cheap.
    keepAliveTimeout: 75_000,
    // Slow clients (slowloris) are cut: headers and the whole request each have a deadline.
    // Node checks them on an interval, 30 s by default: too coarse for a 10 s limit.
    requestTimeout: options.requestTimeoutMs,
    // Node answers a missing Host with its own bare 400; we answer it in our envelope below.
    http: { headersTimeout: options.headersTimeoutMs, connectionsCheckingInterval: Math.min(1000, Math.ceil(options.headersTimeoutMs / 2)), requireHostHeader: false },
    clientErrorHandler: handleClientError,
    // While draining, requests arriving on open keep-alive connections are still served (with
    // Connection: close) instead of fastify's non-OpenAI 503 body.
    return503OnClosing: false,
  });

  // Chat requests are JSON only: without this fastify would also accept text/plain bodies.
  app.removeContentTypeParser('text/plain');
  // HTTP/0.9 and HTTP/1.1 without Host are malformed (RFC 9112 §3.2): refused, connection closed.
  app.addHook('onRequest', function wellFormed(request, reply, done) {
    const raw = request.raw;
    if (raw.httpVersionMajor >= 1 && (raw.httpVersionMinor === 0 || raw.headers.host !== undefined)) return done();
    const error = new GatewayError('bad_request', raw.httpVersionMajor < 1 ? 'Malformed HTTP request (HTTP/0.9 is not supported).' : 'Malformed HTTP request (HTTP/1.1 requires a Host header).');
    reply.code(error.status).headers({ 'x-request-id': request.id, connection: 'close' }).send(error.toJSON());
  });
  // Before a byte of the body is read: over the bytes of bodies in flight, 503 with Retry-After.
  const bodies = new BodyBudget(options.inFlightBodyLimit);
  app.addHook('onRequest', function boundBodiesInFlight(request, reply, done) {
    const bytes = bodyBytesOf(request.raw, options.bodyLimit);
    if (!bytes) return done();
    if (!bodies.take(bytes)) {
      return done(new GatewayError('server_busy', 'The gateway is receiving as many request bodies as it can hold (server.inFlightBodyLimit); retry shortly.', { headers: { 'retry-after': '1' } }));
    }
    reply.raw.once('close', () => bodies.give(bytes));
    done();
  });
  for (const route of routes) route.register(app, options);

  app.setNotFoundHandler(function notFound(request, reply) {
    const allowed = allowedMethod(routes, request.url);
    const error = (
      allowed
        ? new GatewayError('method_not_allowed', `Method ${request.method} is not allowed on ${request.url.split('?')[0]}; use ${allowed}.`)
        : new GatewayError('not_found', `Unknown request URL: ${request.method} ${request.url.split('?')[0]}. Chat completions are at POST /v1/chat/completions.`)
    ).redacted(getRuntime().redact);
    if (allowed) reply.header('allow', allowed);
    // A Gemini client calling a method the gateway does not serve gets Google's envelope, which its SDK reads.
    const answer = isGeminiUrl(request.url) ? googleErrorOf(error, request.id).body : error.toJSON();
    reply.code(error.status).header('x-request-id', request.id).send(answer);
    logUnknownRoute(options, request, error.status);
  });

  app.setErrorHandler(function onError(err: Error & { code?: string; statusCode?: number }, request, reply) {
    const error = fromFastifyError(err).redacted(getRuntime().redact);
    if (error.code === 'request_too_large' || error.code === 'server_busy') {
      // The body may still be arriving: dropped as it comes, so the client reads this answer (fastify asked to close, which resets).
      discardUnreadBody(request.raw);
      reply.removeHeader('connection');
    }
    if (error.code === 'internal_error') log.error({ err, reqId: request.id }, 'unhandled error');
    // Body-parsing failures happen before the pipeline: answered in the protocol and logged like any other request.
    const protocol = request.routeOptions.url === undefined ? undefined : protocolAt.get(request.routeOptions.url);
    if (protocol) return refuseUnread(options, protocol, request, reply, error);
    reply
      .code(error.status)
      .headers({ 'x-request-id': request.id, ...error.headers })
      .send(error.toJSON());
  });

  return app;
}

/**
 * Which client called what the gateway does not serve (a new endpoint a client release uses, say):
 * a log line with the method, path (secrets scrubbed, no query) and key name when the caller has
 * a valid one, and a counter by method.
 */
function logUnknownRoute({ getRuntime, log, observer }: AppOptions, request: FastifyRequest, status: number): void {
  const runtime = getRuntime();
  let key: string | undefined;
  try {
    key = runtime.identify?.(request.headers).name;
  } catch {
    // No key or an unknown one: logged without a name.
  }
  const path = runtime.redact(request.url.split('?')[0]).slice(0, 200);
  log.info({ reqId: request.id, method: request.method, path, status, key }, 'unknown route');
  observer.unknownRoute?.(request.method, status);
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
