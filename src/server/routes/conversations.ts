/**
 * The Conversations API (https://platform.openai.com/docs/api-reference/conversations), kept in
 * the stored responses' backend (src/responses-store/conversations.ts):
 *
 *   POST   /v1/conversations                      {items?, metadata?} → the conversation
 *   GET    /v1/conversations/{id}                 the conversation
 *   POST   /v1/conversations/{id}                 {metadata} → the conversation, updated
 *   DELETE /v1/conversations/{id}                 {id, object: "conversation.deleted", deleted: true}
 *   GET    /v1/conversations/{id}/items           its items, a page at a time (after, limit, order)
 *   POST   /v1/conversations/{id}/items           {items} → the items added, as a list
 *   GET    /v1/conversations/{id}/items/{item}    one item
 *   DELETE /v1/conversations/{id}/items/{item}    → the conversation
 *
 * `conversation` on POST /v1/responses puts its items before the input and adds the turn's input
 * and output to it. Scoped like responses: another key's (or team's) id is a 404.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError } from '../../errors.ts';
import { prefixOf } from '../../ingress/responses/stored.ts';
import type { Item, ResponseStore } from '../../responses-store/index.ts';
import { itemPage } from '../../responses-store/page.ts';
import type { RouteModule, ServerDeps } from '../surface.ts';

type Json = Record<string, unknown>;
type ConversationRequest = FastifyRequest<{ Params: { id: string; item?: string }; Querystring: Json; Body: unknown }>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

export const conversationRoutes: RouteModule = {
  surface: [
    { pattern: /^\/(v1\/)?conversations\/?$/, method: 'POST' },
    { pattern: /^\/(v1\/)?conversations\/[^/]+\/?$/, method: 'GET, POST, DELETE' },
    { pattern: /^\/(v1\/)?conversations\/[^/]+\/items\/?$/, method: 'GET, POST' },
    { pattern: /^\/(v1\/)?conversations\/[^/]+\/items\/[^/]+\/?$/, method: 'GET, DELETE' },
  ],
  register(app, deps) {
    for (const prefix of ['/v1/conversations', '/conversations']) {
      app.post(prefix, handler(deps, create));
      app.get(`${prefix}/:id`, handler(deps, retrieve));
      app.post(`${prefix}/:id`, handler(deps, update));
      app.delete(`${prefix}/:id`, handler(deps, remove));
      app.get(`${prefix}/:id/items`, handler(deps, listItems));
      app.post(`${prefix}/:id/items`, handler(deps, addItems));
      app.get(`${prefix}/:id/items/:item`, handler(deps, getItem));
      app.delete(`${prefix}/:id/items/:item`, handler(deps, deleteItem));
    }
  },
};

interface Call {
  store: ResponseStore;
  owner: string;
  request: ConversationRequest;
}

/** The caller's owner (its key checked first), then the operation; its answer is sent as JSON. */
function handler(deps: ServerDeps, operation: (call: Call) => Promise<unknown>) {
  return async function conversations(request: ConversationRequest, reply: FastifyReply): Promise<void> {
    const key = deps.getRuntime().identify?.(request.headers);
    const store = deps.responses;
    if (!store) throw new GatewayError('not_found', 'Conversations are not kept by this gateway (state.responses.enabled: false).');
    reply.header('x-request-id', request.id).send(await operation({ store, owner: store.ownerOf(key), request }));
  };
}

const notFound = (id: string) => new GatewayError('response_not_found', `Conversation with id '${id}' not found.`);
const itemNotFound = (id: string) => new GatewayError('response_not_found', `Item with id '${id}' not found.`);

async function create({ store, owner, request }: Call) {
  const body = isObject(request.body) ? request.body : {};
  return store.conversations.create(owner, itemsOf(body.items ?? [], 'items'), metadataOf(body.metadata ?? {}));
}

async function retrieve({ store, owner, request }: Call) {
  const found = await store.conversations.get(owner, request.params.id);
  if (!found) throw notFound(request.params.id);
  return found.conversation;
}

async function update({ store, owner, request }: Call) {
  const body = isObject(request.body) ? request.body : {};
  if (body.metadata === undefined) throw new GatewayError('missing_required_parameter', "Missing required parameter: 'metadata'.", { param: 'metadata' });
  const metadata = metadataOf(body.metadata);
  const changed = await store.conversations.change(owner, request.params.id, (items, conversation) => {
    conversation.metadata = metadata;
    return items;
  });
  if (!changed) throw notFound(request.params.id);
  return changed.conversation;
}

async function remove({ store, owner, request }: Call) {
  if (!(await store.conversations.delete(owner, request.params.id))) throw notFound(request.params.id);
  return { id: request.params.id, object: 'conversation.deleted', deleted: true };
}

async function listItems({ store, owner, request }: Call) {
  const found = await store.conversations.get(owner, request.params.id);
  if (!found) throw notFound(request.params.id);
  return itemPage(found.items, request.query);
}

async function addItems({ store, owner, request }: Call) {
  const body = isObject(request.body) ? request.body : {};
  if (body.items === undefined) throw new GatewayError('missing_required_parameter', "Missing required parameter: 'items'.", { param: 'items' });
  const added = itemsOf(body.items, 'items');
  const changed = await store.conversations.change(owner, request.params.id, (items) => [...items, ...added]);
  if (!changed) throw notFound(request.params.id);
  return { object: 'list', data: added, first_id: added[0]?.id ?? null, last_id: added.at(-1)?.id ?? null, has_more: false };
}

async function getItem({ store, owner, request }: Call) {
  const found = await store.conversations.get(owner, request.params.id);
  if (!found) throw notFound(request.params.id);
  const item = found.items.find((i) => i.id === request.params.item);
  if (!item) throw itemNotFound(String(request.params.item));
  return item;
}

async function deleteItem({ store, owner, request }: Call) {
  const target = String(request.params.item);
  let had = false;
  const changed = await store.conversations.change(owner, request.params.id, (items) => {
    had = items.some((i) => i.id === target);
    return items.filter((i) => i.id !== target);
  });
  if (!changed) throw notFound(request.params.id);
  if (!had) throw itemNotFound(target);
  return changed.conversation;
}

/** Input items as a conversation keeps them: objects, each with an id (given when missing). */
function itemsOf(items: unknown, param: string): Item[] {
  if (!Array.isArray(items)) throw new GatewayError('invalid_request', `Invalid '${param}': expected an array of items.`, { param });
  return items.map((item, i) => {
    if (!isObject(item)) throw new GatewayError('invalid_request', `Invalid '${param}[${i}]': expected an object (a message or an item).`, { param: `${param}[${i}]` });
    const type = item.type ?? 'message';
    const id = typeof item.id === 'string' && item.id ? item.id : `${prefixOf(type)}_${randomBytes(16).toString('hex')}`;
    return { ...item, type, id };
  });
}

function metadataOf(metadata: unknown): Record<string, string> {
  if (!isObject(metadata) || Object.values(metadata).some((v) => typeof v !== 'string')) {
    throw new GatewayError('invalid_request', "Invalid 'metadata': expected an object of strings.", { param: 'metadata' });
  }
  // Checked just above: every value is a string.
  return metadata as Record<string, string>;
}
