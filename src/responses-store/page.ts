/**
 * One page of a list of items, as OpenAI's list endpoints answer it (input_items, conversation
 * items): `limit` 1–100 (default 20), `order` asc or desc (default desc), `after` an item id.
 */
import { GatewayError } from '../errors.ts';
import type { Item } from './types.ts';

export interface ItemPage {
  object: 'list';
  data: Item[];
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}

export function itemPage(all: readonly Item[], query: Readonly<Record<string, unknown>>): ItemPage {
  const limit = query.limit === undefined ? 20 : Number(query.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw new GatewayError('invalid_request', "Invalid 'limit': expected an integer from 1 to 100.", { param: 'limit' });
  const order = query.order ?? 'desc';
  if (order !== 'asc' && order !== 'desc') throw new GatewayError('invalid_request', "Invalid 'order': expected 'asc' or 'desc'.", { param: 'order' });
  const items = order === 'asc' ? all : [...all].reverse();
  let start = 0;
  if (typeof query.after === 'string' && query.after) {
    const at = items.findIndex((i) => i.id === query.after);
    if (at < 0) throw new GatewayError('invalid_request', `Invalid 'after': no item with id '${query.after}' in this list.`, { param: 'after' });
    start = at + 1;
  }
  const data = items.slice(start, start + limit);
  return { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: start + limit < items.length };
}
