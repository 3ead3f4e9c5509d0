/**
 * The stored Responses' own endpoints (https://platform.openai.com/docs/api-reference/responses):
 *
 *   GET    /v1/responses/{id}              the response as it was answered (`?stream=true`: replayed as events)
 *   DELETE /v1/responses/{id}              {id, object: "response", deleted: true}
 *   GET    /v1/responses/{id}/input_items  its input items, a page at a time (after, limit, order)
 *   POST   /v1/responses/{id}/cancel       only background responses can be cancelled, and the
 *                                          gateway runs none: 400 for a stored one, else 404
 *
 * Each reads as the caller's key (or team): another's id is a 404 exactly like an unknown one.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError } from '../../errors.ts';
import { replayEvents, replayedSse } from '../../ingress/responses/replay.ts';
import type { ResponseStore, StoredResponse } from '../../responses-store/index.ts';
import { itemPage } from '../../responses-store/page.ts';
import { SSE_HEADERS } from '../../protocol/sse.ts';
import type { RouteModule, ServerDeps } from '../surface.ts';

type ById = FastifyRequest<{ Params: { id: string }; Querystring: Record<string, unknown> }>;

const PREFIXES = ['/v1/responses', '/responses'] as const;

export const responseRoutes: RouteModule = {
  surface: [
    { pattern: /^\/(v1\/)?responses\/[^/]+\/?$/, method: 'GET, DELETE' },
    { pattern: /^\/(v1\/)?responses\/[^/]+\/input_items\/?$/, method: 'GET' },
    { pattern: /^\/(v1\/)?responses\/[^/]+\/cancel\/?$/, method: 'POST' },
  ],
  register(app, deps) {
    for (const prefix of PREFIXES) {
      app.get(`${prefix}/:id`, retrieve(deps));
      app.delete(`${prefix}/:id`, remove(deps));
      app.get(`${prefix}/:id/input_items`, inputItems(deps));
      app.post(`${prefix}/:id/cancel`, cancel(deps));
    }
  },
};

const notFound = (id: string) => new GatewayError('response_not_found', `Response with id '${id}' not found.`);

/** The caller's record of `id`, or the 404 (the key is checked first, as every route checks it). */
async function recordFor(deps: ServerDeps, request: ById): Promise<{ store: ResponseStore; owner: string; record: StoredResponse }> {
  const key = deps.getRuntime().identify?.(request.headers);
  const store = deps.responses;
  if (!store) throw notFound(request.params.id);
  const owner = store.ownerOf(key);
  const record = await store.response(owner, request.params.id);
  if (!record) throw notFound(request.params.id);
  return { store, owner, record };
}

function retrieve(deps: ServerDeps) {
  return async function retrieveResponse(request: ById, reply: FastifyReply): Promise<void> {
    const { record } = await recordFor(deps, request);
    if (request.query.stream !== 'true' && request.query.stream !== true) {
      reply.header('x-request-id', request.id).send(record.response);
      return;
    }
    const after = Number(request.query.starting_after ?? -1);
    const text = replayEvents(record.response)
      .filter((e) => e.sequence_number > (Number.isFinite(after) ? after : -1))
      .map(replayedSse)
      .join('');
    reply.hijack();
    reply.raw.writeHead(200, { ...SSE_HEADERS, 'x-request-id': request.id });
    reply.raw.end(text);
  };
}

function remove(deps: ServerDeps) {
  return async function deleteResponse(request: ById, reply: FastifyReply): Promise<void> {
    const { store, owner, record } = await recordFor(deps, request);
    if (!(await store.delete(owner, record.id))) throw notFound(request.params.id);
    reply.header('x-request-id', request.id).send({ id: record.id, object: 'response', deleted: true });
  };
}

function inputItems(deps: ServerDeps) {
  return async function listInputItems(request: ById, reply: FastifyReply): Promise<void> {
    const { record } = await recordFor(deps, request);
    reply.header('x-request-id', request.id).send(itemPage(record.input, request.query));
  };
}

function cancel(deps: ServerDeps) {
  return async function cancelResponse(request: ById, _reply: FastifyReply): Promise<void> {
    await recordFor(deps, request);
    // As OpenAI answers a response that was not created with background: true.
    throw new GatewayError('invalid_request', 'Cannot cancel a synchronous response.');
  };
}
