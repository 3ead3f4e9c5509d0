import { describe, expect, it } from 'vitest';
import { describeFailure, refreshingCredential } from './credentials.ts';
import { UpstreamError } from './upstream-error.ts';

/** A token endpoint under test control: each fetch waits for `answer` or `fail`. */
function issuer() {
  const pending: { resolve: (v: { value: string; expiresAt?: number; source?: string }) => void; reject: (e: unknown) => void }[] = [];
  let calls = 0;
  return {
    fetch: () =>
      new Promise<{ value: string; expiresAt?: number; source?: string }>((resolve, reject) => {
        calls++;
        pending.push({ resolve, reject });
      }),
    answer(value: string, expiresAt?: number, source?: string) {
      pending.shift()?.resolve({ value, expiresAt, source });
    },
    fail(message: string) {
      pending.shift()?.reject(new Error(message));
    },
    get calls() {
      return calls;
    },
    get waiting() {
      return pending.length;
    },
  };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('refreshingCredential', () => {
  it('fetches once for concurrent first requests and serves from memory after', async () => {
    let clock = 1_000_000;
    const up = issuer();
    const cred = refreshingCredential({ provider: 'vx', source: 'metadata-server', fetch: up.fetch, now: () => clock });
    const first = Promise.all([cred.get(), cred.get(), cred.get()]);
    await tick();
    expect(up.calls).toBe(1);
    up.answer('t1', clock + 3_600_000);
    expect(await first).toEqual(['t1', 't1', 't1']);
    clock += 60_000;
    expect(await cred.get()).toBe('t1');
    expect(up.calls).toBe(1);
    expect(cred.status()).toMatchObject({ source: 'metadata-server', expiresAt: 1_000_000 + 3_600_000, refreshes: 1, failures: 0 });
  });

  it('refreshes ahead of expiry behind the request, one refresh at a time', async () => {
    let clock = 0;
    const up = issuer();
    const cred = refreshingCredential({ provider: 'vx', source: 'sa', fetch: up.fetch, now: () => clock, refreshAheadMs: 300_000 });
    const first = cred.get();
    await tick();
    up.answer('t1', 3_600_000);
    await first;
    clock = 3_600_000 - 200_000; // inside the refresh window, still valid
    expect(await cred.get()).toBe('t1'); // served without waiting
    expect(await cred.get()).toBe('t1');
    expect(up.calls).toBe(2); // one background refresh for both
    up.answer('t2', clock + 3_600_000);
    await tick();
    expect(await cred.get()).toBe('t2');
    expect(cred.status().refreshes).toBe(2);
  });

  it('refreshes a short-lived credential at half its lifetime', async () => {
    let clock = 0;
    const up = issuer();
    const cred = refreshingCredential({ provider: 'vx', source: 'sa', fetch: up.fetch, now: () => clock });
    const first = cred.get();
    await tick();
    up.answer('t1', 4_000);
    await first;
    clock = 1_900;
    await cred.get();
    expect(up.calls).toBe(1);
    clock = 2_100;
    await cred.get();
    expect(up.calls).toBe(2);
  });

  it('keeps the old credential when a refresh fails, and fails requests only once it expired', async () => {
    let clock = 0;
    const up = issuer();
    const cred = refreshingCredential({ provider: 'vx', source: 'sa', fetch: up.fetch, now: () => clock, refreshAheadMs: 1_000, retryAfterFailureMs: 100 });
    const first = cred.get();
    await tick();
    up.answer('t1', 10_000);
    await first;
    clock = 9_500;
    expect(await cred.get()).toBe('t1');
    up.fail('token endpoint said 500');
    await tick();
    expect(cred.status()).toMatchObject({ failures: 1, lastError: 'token endpoint said 500' });
    clock = 9_550; // within the retry back-off: no new fetch
    expect(await cred.get()).toBe('t1');
    expect(up.calls).toBe(2);
    clock = 10_001; // expired: the request waits for a fetch, which fails
    const late = cred.get();
    await tick();
    up.fail('still down');
    const err = await late.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UpstreamError);
    expect((err as UpstreamError).status).toBe(503);
    expect((err as UpstreamError).retryable).toBe(false);
    expect((err as UpstreamError).message).toContain('still down');
    // and recovers on the next success
    const again = cred.get();
    await tick();
    up.answer('t3', clock + 10_000);
    expect(await again).toBe('t3');
    expect(cred.status().lastError).toBeUndefined();
  });

  it('takes the source a chain reports', async () => {
    const up = issuer();
    const cred = refreshingCredential({ provider: 'bx', source: 'aws:default-chain', fetch: up.fetch });
    const first = cred.get();
    await tick();
    up.answer('k', undefined, 'aws:web-identity');
    await first;
    expect(cred.status()).toMatchObject({ source: 'aws:web-identity', expiresAt: undefined });
  });
});

describe('describeFailure', () => {
  it('masks what looks like a token and keeps one bounded line', () => {
    const jwt = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzYUBwcm9qLmlhbSJ9.c2lnbmF0dXJlc2lnbmF0dXJlc2lnbmF0dXJl';
    const text = describeFailure(new Error(`invalid_grant: assertion ${jwt} rejected\nat stack line`));
    expect(text).toBe('invalid_grant: assertion [redacted] rejected');
    expect(describeFailure(new Error('x'.repeat(10) + ' '.repeat(300))).length).toBeLessThanOrEqual(240);
  });
});
