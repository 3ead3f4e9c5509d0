/**
 * Stored Responses on the way in and out (https://platform.openai.com/docs/api-reference/responses/create):
 *
 *   previous_response_id   the stored chain's input and output items, oldest first, go before this
 *                          request's input; the id stays on the answer (`previous_response_id`)
 *   item_reference         replaced by the stored item of that id (an output item of a stored
 *                          response, or a stored input item)
 *   store (default true)   the finished response is kept with this request's own input items (ids
 *                          given to those without), and the chain it continues
 *
 * The expansion runs before the pipeline: whatever serves the request (a translation to chat, or
 * a provider that speaks Responses natively) gets a self-contained request and needs no state of
 * its own (`selfContainedBody`). Everything is read and kept as the caller's owner (its key, or its
 * team): another owner's id answers exactly as an unknown one.
 */
import type { KeyIdentity } from '../../plugin-api.ts';
import { GatewayError } from '../../errors.ts';
import { outputOf, type Item, type ResponseStore } from '../../responses-store/index.ts';
import { invalidParam, unsupportedParam } from './errors.ts';
import type { ResponsesRequest } from './types.ts';

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** What a request keeps once answered: where, as whom, after which chain, with which input. */
export interface StoredCall {
  readonly store: ResponseStore;
  readonly owner: string;
  /** Keep the response itself (`store`). */
  readonly keep: boolean;
  /** The chain this response continues, oldest first. */
  readonly chain: string[];
  /** This request's own input items, references resolved, with ids. */
  readonly input: Item[];
  /** The conversation its input and output items are added to. */
  readonly conversation?: string;
}

export interface ExpandContext {
  /** The gateway's response store; undefined when it keeps none. */
  readonly store: ResponseStore | undefined;
  /** The caller's key (whose responses it may read); undefined without keys. */
  key(): KeyIdentity | undefined;
  /** The id this request's response will have (input items get ids derived from it). */
  readonly responseId: string;
}

/** The request made self-contained, and what to keep once it is answered (none for store: false). */
export async function expandStored(request: ResponsesRequest, context: ExpandContext): Promise<{ request: ResponsesRequest; stored?: StoredCall }> {
  const { store } = context;
  const refers = Array.isArray(request.input) && request.input.some((i) => isObject(i) && i.type === 'item_reference');
  if (!store) {
    for (const key of ['previous_response_id', 'conversation'] as const) {
      if (request[key] !== undefined) {
        throw unsupportedParam(key, `'${key}' is not supported: this gateway keeps no responses (state.responses.enabled: false); send the whole conversation in 'input'.`);
      }
    }
    // Item references are refused by the translation (input.ts), naming the item.
    return { request: { ...request, store: false } };
  }
  if (!request.store && request.previous_response_id === undefined && request.conversation === undefined && !refers) return { request };
  const owner = store.ownerOf(context.key());
  let chain: string[] = [];
  let history: Item[] = [];
  if (request.previous_response_id !== undefined) {
    const found = await store.history(owner, request.previous_response_id);
    if (!found) {
      throw new GatewayError('previous_response_not_found', `Previous response with id '${request.previous_response_id}' not found.`, { param: 'previous_response_id' });
    }
    ({ chain, items: history } = found);
  }
  if (request.conversation !== undefined) {
    const found = await store.conversations.get(owner, request.conversation);
    if (!found) throw new GatewayError('response_not_found', `Conversation with id '${request.conversation}' not found.`, { param: 'conversation' });
    history = found.items;
  }
  const input = await ownItems(request.input, store, owner, context.responseId);
  // What the model sees: the chain, then the input as sent, its references replaced (the ids given for storage change nothing).
  const sent =
    typeof request.input === 'string'
      ? [{ type: 'message', role: 'user', content: request.input }]
      : request.input.map((item, i) => (isObject(item) && item.type === 'item_reference' ? input[i] : item));
  const expanded: ResponsesRequest = { ...request, input: history.length === 0 && typeof request.input === 'string' ? request.input : [...history, ...sent] };
  const keep = request.store === true;
  if (!keep && request.conversation === undefined) return { request: expanded };
  return { request: expanded, stored: { store, owner, keep, chain, input, conversation: request.conversation } };
}

/** The request's input as items: a string is one user message; references resolved; ids given. */
async function ownItems(input: ResponsesRequest['input'], store: ResponseStore, owner: string, responseId: string): Promise<Item[]> {
  const tag = responseId.replace(/^resp_/, '');
  const items = typeof input === 'string' ? [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: input }] }] : input;
  const out: Item[] = [];
  for (const [i, item] of items.entries()) {
    if (!isObject(item)) throw invalidParam(`input[${i}]`, 'expected an object (a message or an item)');
    if (item.type === 'item_reference') {
      if (typeof item.id !== 'string' || !item.id) throw invalidParam(`input[${i}].id`, 'expected a non-empty string');
      const found = await store.item(owner, item.id);
      if (!found) throw new GatewayError('response_not_found', `Item with id '${item.id}' not found.`, { param: `input[${i}]` });
      out.push(found);
      continue;
    }
    const id = typeof item.id === 'string' && item.id ? item.id : `${prefixOf(item.type)}_${tag}_in${i}`;
    out.push({ type: 'message', ...item, id });
  }
  return out;
}

/** OpenAI's id prefixes by item type. */
export function prefixOf(type: unknown): string {
  switch (type) {
    case undefined:
    case 'message':
      return 'msg';
    case 'function_call':
      return 'fc';
    case 'function_call_output':
      return 'fco';
    case 'reasoning':
      return 'rs';
    default:
      return 'item';
  }
}

/**
 * Keeps the response the client got, once (later calls are no-ops: a stream ends once), and adds
 * the turn's input and output items to its conversation. Whatever produced the answer, it is kept
 * the same way: a translated answer's object, or a native pass-through's JSON body or the
 * `response` of its stream's final event (response.completed / incomplete / failed).
 */
export function recorder(stored: StoredCall | undefined): (response: unknown) => Promise<void> {
  let done = !stored;
  return async (response) => {
    if (done || !stored || !isObject(response) || typeof response.id !== 'string') return;
    done = true;
    const { store, owner } = stored;
    const kept = stored.keep && store.save(owner, { id: response.id, response, input: stored.input, chain: stored.chain, storedAt: Date.now() });
    const { conversation } = stored;
    if (conversation !== undefined) {
      const turn = [...stored.input, ...outputOf(response)];
      await store.conversations.change(owner, conversation, (items) => [...items, ...turn]).catch(() => undefined);
    }
    await kept;
  };
}

/**
 * The client's body as a provider that speaks Responses natively should get it: the expanded
 * input, no `previous_response_id`, and `store: false` (the gateway keeps it; the provider need not).
 */
export function selfContainedBody(body: Json, request: ResponsesRequest): Json {
  const { previous_response_id: _, ...rest } = body;
  return { ...rest, input: request.input, store: false };
}
