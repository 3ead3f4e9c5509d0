/** Admin keys: plain or hashed, compared by digest, a separate index from client keys. */
import { describe, expect, it } from 'vitest';
import type { GatewayConfig } from '../config/types.ts';
import { GatewayError } from '../errors.ts';
import { sha256Hex } from '../runtime/keys.ts';
import { authenticateAdmin, buildAdminKeyIndex } from './auth.ts';

const config = (keys: GatewayConfig['admin']['keys'], clientKey = 'sk-client-0123456789') =>
  // Cast on purpose: only the fields the admin index reads.
  ({ admin: { keys }, keys: [{ name: 'client', key: clientKey, models: ['*'] }] }) as unknown as GatewayConfig;
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

function refusedWith(headers: Record<string, string>, cfg: GatewayConfig): string {
  try {
    authenticateAdmin(headers, cfg);
  } catch (err) {
    expect(err).toBeInstanceOf(GatewayError);
    expect((err as GatewayError).status).toBe(401);
    expect((err as GatewayError).code).toBe('invalid_api_key');
    return (err as GatewayError).message;
  }
  throw new Error('admitted');
}

describe('admin keys', () => {
  it('indexes a key by its sha256 and a keyHash as given', () => {
    const index = buildAdminKeyIndex([
      { name: 'ops', key: 'sk-admin-ops-01' },
      { name: 'audit', keyHash: `sha256:${sha256Hex('sk-admin-audit-01')}` },
    ]);
    expect([...index]).toEqual([
      [sha256Hex('sk-admin-ops-01'), 'ops'],
      [sha256Hex('sk-admin-audit-01'), 'audit'],
    ]);
  });

  it('names the admin key of a Bearer token (either case of "bearer"), plain or hashed', () => {
    const cfg = config([
      { name: 'ops', key: 'sk-admin-ops-01' },
      { name: 'audit', keyHash: `sha256:${sha256Hex('sk-admin-audit-01')}` },
    ]);
    expect(authenticateAdmin(bearer('sk-admin-ops-01'), cfg)).toBe('ops');
    expect(authenticateAdmin({ authorization: 'bearer  sk-admin-audit-01 ' }, cfg)).toBe('audit');
  });

  it('401 without a header, with another scheme, with a client key, and when no admin key is configured', () => {
    const cfg = config([{ name: 'ops', key: 'sk-admin-ops-01' }]);
    expect(refusedWith({}, cfg)).toContain('Missing admin key');
    expect(refusedWith({ authorization: 'Basic b3BzOnNr' }, cfg)).toContain('Malformed Authorization header');
    expect(refusedWith(bearer('sk-client-0123456789'), cfg)).toBe('Incorrect admin key provided. Client keys cannot read the admin API.');
    expect(refusedWith(bearer('sk-admin-ops-01'), config([]))).toContain('no admin keys');
  });
});
