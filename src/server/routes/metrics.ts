/**
 * GET /metrics (`metrics.path`): the Prometheus text exposition, on the main port, or on a
 * listener of its own when `metrics.port` is set (then the main port does not serve it). With
 * `metrics.auth: true` a key from `admin.keys` is required as `Authorization: Bearer`; client
 * keys do not open it.
 */
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { authenticateAdmin } from '../../admin/auth.ts';
import { GatewayError, toGatewayError } from '../../errors.ts';
import type { GatewayMetrics } from '../../observability/metrics.ts';
import type { Runtime } from '../../runtime/build.ts';
import type { RouteModule } from '../surface.ts';

/** What serving the metrics needs: the registry and its path (restart-only settings). */
export interface MetricsEndpoint {
  metrics: GatewayMetrics;
  path: string;
}

declare module '../surface.ts' {
  interface ServerDeps {
    /** Metrics to serve on the main port (absent when disabled or on their own listener). */
    metricsEndpoint?: MetricsEndpoint;
  }
}

export const metricsRoutes: RouteModule = {
  // The path is configurable: it is registered only when metrics are served on this port.
  surface: [],
  register(app, deps) {
    if (deps.metricsEndpoint) app.get(deps.metricsEndpoint.path, scrape(deps.metricsEndpoint, deps.getRuntime));
  },
};

function scrape({ metrics }: MetricsEndpoint, getRuntime: () => Runtime) {
  return async function scrape(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    reply.header('x-request-id', request.id);
    // `auth` and the admin keys are read from the generation serving now: a reload changes them.
    const config = getRuntime().config;
    if (config.metrics.auth) {
      try {
        authenticateAdmin(request.headers, config);
      } catch (err) {
        const error = toGatewayError(err);
        reply.code(error.status).header('www-authenticate', 'Bearer').send(error.toJSON());
        return;
      }
    }
    const text = await metrics.render();
    reply.header('content-type', metrics.contentType).header('cache-control', 'no-store').send(text);
  };
}

export interface MetricsListener {
  /** http://host:port of the listener. */
  url: string;
  close(): Promise<void>;
}

/** The metrics on a listener of their own (`metrics.port`), same host as the gateway. */
export async function startMetricsListener(endpoint: MetricsEndpoint, options: { host: string; port: number; getRuntime: () => Runtime }): Promise<MetricsListener> {
  const app: FastifyInstance = Fastify({ logger: false });
  app.get(endpoint.path, scrape(endpoint, options.getRuntime));
  app.setNotFoundHandler(function notFound(request, reply) {
    const error = new GatewayError('not_found', `Unknown request URL: ${request.method} ${request.url.split('?')[0]}. This listener serves only GET ${endpoint.path}.`);
    reply.code(error.status).send(error.toJSON());
  });
  await app.listen({ host: options.host, port: options.port });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  return { url: `http://${host}:${port}`, close: () => app.close() };
}
