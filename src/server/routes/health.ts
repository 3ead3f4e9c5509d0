/** GET /healthz (the process is up) and GET /readyz (what the current generation serves). */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { identityOf, identityView, type IdentityView } from '../../providers/identity-view.ts';
import type { RouteModule, ServerDeps } from '../surface.ts';

export const healthRoutes: RouteModule = {
  surface: [
    { pattern: /^\/healthz\/?$/, method: 'GET' },
    { pattern: /^\/readyz\/?$/, method: 'GET' },
  ],
  register(app, deps) {
    app.get('/healthz', healthz);
    app.get('/readyz', readyz(deps));
  },
};

async function healthz(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  reply.header('x-request-id', request.id).send({ status: 'ok' });
}

function readyz({ getRuntime, readiness }: ServerDeps) {
  return async function readyz(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const runtime = getRuntime();
    const providers: Record<string, { status: string; reason?: string; identity?: IdentityView }> = {};
    for (const [name, h] of runtime.providers) {
      // Where its credentials come from and when they expire (never the credential).
      const identity = identityOf(h.instance);
      providers[name] = h.unavailable ? { status: 'unavailable', reason: h.unavailable } : { status: 'ready', ...(identity && { identity: identityView(identity, runtime.redact) }) };
    }
    reply.header('x-request-id', request.id).send({
      status: 'ready',
      generation: runtime.generation,
      config: runtime.file,
      models: [...runtime.models.keys()],
      providers,
      ...readiness?.(),
    });
  };
}
