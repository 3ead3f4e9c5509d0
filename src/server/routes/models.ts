/** GET /v1/models and /v1/models/{id}: the aliases the caller's key may use. */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { IncomingHttpHeaders } from 'node:http';
import { GatewayError } from '../../errors.ts';
import type { ModelRoute } from '../../plugin-api.ts';
import type { Runtime } from '../../runtime/build.ts';
import type { RouteModule, ServerDeps } from '../surface.ts';
import { geminiModelHandlers, speaksGemini } from '../../ingress/gemini/models.ts';

const PATHS = ['/v1/models', '/models'] as const;

export const modelRoutes: RouteModule = {
  surface: [{ pattern: /^\/(v1\/)?models(\/[^/]+)?\/?$/, method: 'GET' }],
  register(app, deps) {
    const list = listModels(deps);
    const get = getModel(deps);
    // The Google GenAI SDK lists models at /v1/models too: answered in Gemini's shape.
    const gemini = geminiModelHandlers(deps);
    for (const path of PATHS) {
      app.get(path, (request, reply) => (speaksGemini(request) ? gemini.list(request, reply) : list(request, reply)));
      app.get(`${path}/:model`, (request: FastifyRequest<{ Params: { model: string } }>, reply) => (speaksGemini(request) ? gemini.one(request, reply) : get(request, reply)));
    }
  },
};

function listModels({ getRuntime }: ServerDeps) {
  return async function listModels(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const runtime = getRuntime();
    const allows = visibleModels(request.headers, runtime);
    const data = [...runtime.models.values()].filter((m) => allows(m.name)).map((m) => modelObject(runtime, m.name, m));
    reply.header('x-request-id', request.id).send({ object: 'list', data });
  };
}

function getModel({ getRuntime }: ServerDeps) {
  return async function getModel(request: FastifyRequest<{ Params: { model: string } }>, reply: FastifyReply): Promise<void> {
    const runtime = getRuntime();
    // The key first: whether a model exists is not told to a caller without one.
    const allows = visibleModels(request.headers, runtime);
    const name = request.params.model;
    // A name a pattern alias covers is a model too (a client checking its default model before use).
    const route = runtime.resolveModel(name);
    if (!route || !(allows(route.name) || allows(name))) {
      throw new GatewayError('model_not_found', `The model \`${name}\` does not exist or you do not have access to it.`, { param: 'model' });
    }
    reply.header('x-request-id', request.id).send(modelObject(runtime, name, route));
  };
}

/** With a stage that identifies callers in the pipeline, listing models needs a key too. */
function visibleModels(headers: IncomingHttpHeaders, runtime: Runtime): (model: string) => boolean {
  const identify = runtime.identify;
  if (!identify) return () => true;
  const key = identify(headers);
  return (model) => key.allows(model);
}

function modelObject(runtime: Runtime, name: string, route: ModelRoute) {
  return { id: name, object: 'model', created: runtime.createdAt, owned_by: route.targets[0]?.provider ?? 'switchyard' };
}
