/**
 * Admin keys (`admin.keys` in gateway.yaml): who may read the admin API. Indexed like client
 * keys (src/runtime/keys.ts), by the sha256 of the secret, so a lookup compares fixed-length
 * digests and `keyHash` entries work like plain ones. The two indexes are separate: an admin
 * key is not a client key (the config loader refuses one secret in both lists), so it cannot
 * call models, and a client key cannot read the admin API.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { AdminKeyConfig, GatewayConfig } from '../config/types.ts';
import { GatewayError } from '../errors.ts';
import { sha256Hex } from '../runtime/keys.ts';

/** Digest → admin key name. */
export function buildAdminKeyIndex(keys: readonly AdminKeyConfig[]): ReadonlyMap<string, string> {
  const index = new Map<string, string>();
  for (const k of keys) index.set(k.keyHash ? k.keyHash.slice('sha256:'.length) : sha256Hex(k.key!), k.name);
  return index;
}

/** One index per config generation, built on first use. */
const indexes = new WeakMap<GatewayConfig, ReadonlyMap<string, string>>();

function indexOf(config: GatewayConfig): ReadonlyMap<string, string> {
  let index = indexes.get(config);
  if (!index) indexes.set(config, (index = buildAdminKeyIndex(config.admin.keys)));
  return index;
}

/**
 * The name of the admin key in `Authorization: Bearer`; throws 401 `invalid_api_key` (OpenAI's
 * envelope) when it is missing, malformed or not an admin key.
 */
export function authenticateAdmin(headers: IncomingHttpHeaders, config: GatewayConfig): string {
  const header = headers.authorization;
  if (!header) throw new GatewayError('invalid_api_key', 'Missing admin key: send one of admin.keys (gateway.yaml) as "Authorization: Bearer <key>".');
  const token = /^bearer\s+(.+)$/i.exec(header)?.[1]?.trim();
  if (!token) throw new GatewayError('invalid_api_key', 'Malformed Authorization header: expected "Bearer <admin key>".');
  const index = indexOf(config);
  const name = index.get(sha256Hex(token));
  if (name === undefined) {
    throw new GatewayError(
      'invalid_api_key',
      index.size === 0 ? 'This gateway has no admin keys (admin.keys in gateway.yaml): the admin API is closed.' : 'Incorrect admin key provided. Client keys cannot read the admin API.',
    );
  }
  return name;
}

/**
 * The admin endpoints' common opening: a request id, no caching, and the admin key of the
 * current generation (else 401 with `WWW-Authenticate: Bearer`).
 */
export function requireAdmin(request: { id: string; headers: IncomingHttpHeaders }, reply: { header(name: string, value: string): unknown }, config: GatewayConfig): void {
  reply.header('x-request-id', request.id);
  reply.header('cache-control', 'no-store');
  try {
    authenticateAdmin(request.headers, config);
  } catch (err) {
    reply.header('www-authenticate', 'Bearer');
    throw err;
  }
}
