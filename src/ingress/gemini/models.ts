/**
 * `GET /v1beta/models` and `GET /v1beta/models/{model}` in Gemini's Model shape
 * (https://ai.google.dev/api/models): the aliases the caller's key may use, as `models/<alias>`,
 * with the methods the gateway serves for them. Under `/v1/` (where the GenAI SDK's 1.x+
 * default apiVersion `v1` goes) the same paths are OpenAI's model list: a caller that speaks
 * Gemini (`speaksGemini`) gets this shape there too (src/server/routes/models.ts asks).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError, toGatewayError } from '../../errors.ts';
import type { ModelRoute } from '../../plugin-api.ts';
import type { Runtime } from '../../runtime/build.ts';
import type { RouteModule, ServerDeps } from '../../server/surface.ts';
import { googleErrorOf } from './errors.ts';
import { isObject } from './fields.ts';
import { liftQueryKey } from './keys.ts';

const GENERATE_METHODS = ['generateContent', 'streamGenerateContent', 'countTokens'];
const EMBED_METHODS = ['embedContent', 'batchEmbedContents'];

export const geminiModelRoutes: RouteModule = {
  surface: [{ pattern: /^\/v1beta\/models(\/[^/:]+)?\/?$/, method: 'GET' }],
  register(app, deps) {
    const handlers = geminiModelHandlers(deps);
    app.get('/v1beta/models', handlers.list);
    app.get('/v1beta/models/:model', handlers.one);
  },
};

/** The Google SDKs name themselves in `x-goog-api-client` and send keys as `x-goog-api-key` or `?key=`. */
export function speaksGemini(request: FastifyRequest): boolean {
  return request.headers['x-goog-api-client'] !== undefined || request.headers['x-goog-api-key'] !== undefined || typeof queryOf(request).key === 'string';
}

function queryOf(request: FastifyRequest): Record<string, unknown> {
  return isObject(request.query) ? request.query : {};
}

export function geminiModelHandlers(deps: ServerDeps) {
  return { list: answer(deps, list), one: answer(deps, one) };
}

type Lister = (runtime: Runtime, allows: (model: string) => boolean, request: FastifyRequest) => unknown;

function answer({ getRuntime }: ServerDeps, lister: Lister) {
  return async function geminiModels(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const runtime = getRuntime();
    reply.header('x-request-id', request.id);
    try {
      liftQueryKey(queryOf(request), request.headers);
      const key = runtime.identify?.(request.headers);
      const allows = key ? (model: string) => key.allows(model) : () => true;
      reply.send(lister(runtime, allows, request));
    } catch (err) {
      const { status, body } = googleErrorOf(toGatewayError(err).redacted(runtime.redact), request.id);
      reply.code(status).send(body);
    }
  };
}

function list(runtime: Runtime, allows: (model: string) => boolean): unknown {
  return { models: [...runtime.models.values()].filter((m) => allows(m.name)).map((m) => modelOf(m.name, m)) };
}

function one(runtime: Runtime, allows: (model: string) => boolean, request: FastifyRequest): unknown {
  const name = isObject(request.params) && typeof request.params.model === 'string' ? request.params.model : '';
  const route = runtime.resolveModel(name);
  if (!route || !(allows(route.name) || allows(name))) throw new GatewayError('model_not_found', `models/${name} is not found, or your key may not use it.`);
  return modelOf(name, route);
}

function modelOf(name: string, route: ModelRoute) {
  const embeds = route.targets.some((t) => t.capabilities.embeddings === true);
  return {
    name: `models/${name}`,
    baseModelId: name,
    version: '001',
    displayName: name,
    description: `Switchyard alias served by ${[...new Set(route.targets.map((t) => t.provider))].join(', ')}`,
    supportedGenerationMethods: embeds ? [...GENERATE_METHODS, ...EMBED_METHODS] : GENERATE_METHODS,
  };
}
