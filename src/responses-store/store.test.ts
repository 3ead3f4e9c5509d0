import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, expect, it } from 'vitest';
import { SqliteResponseBackend } from './sqlite-backend.ts';
import { ownerOf, ResponseStore } from './store.ts';
import { DEFAULT_RESPONSES_STORE, type StoredResponse } from './types.ts';

const silent = { warn: () => undefined };

function record(id: string, chain: string[] = [], text = `answer ${id}`): StoredResponse {
  return {
    id,
    response: { id, object: 'response', status: 'completed', output: [{ type: 'message', id: `msg_${id}`, role: 'assistant', content: [{ type: 'output_text', text }] }] },
    input: [{ type: 'message', id: `in_${id}`, role: 'user', content: [{ type: 'input_text', text: `question ${id}` }] }],
    chain,
    storedAt: 0,
  };
}

function storeAt(clock: { now: number }, config: Partial<typeof DEFAULT_RESPONSES_STORE> = {}) {
  const backend = new SqliteResponseBackend({ path: ':memory:', maxEntries: config.maxEntries ?? 100, now: () => clock.now });
  return { backend, store: new ResponseStore(backend, { ...DEFAULT_RESPONSES_STORE, ...config }, silent) };
}

describe('ownerOf', () => {
  const key = (name: string, team?: string) => ({ name, team, allows: () => true });
  it('is the key, or its team under scope: team (a key without a team: its own), or anonymous without keys', () => {
    expect(ownerOf(key('a', 't'), 'key')).toBe('key:a');
    expect(ownerOf(key('a', 't'), 'team')).toBe('team:t');
    expect(ownerOf(key('a'), 'team')).toBe('key:a');
    expect(ownerOf(undefined, 'key')).toBe('anonymous');
  });
});

describe('ResponseStore over the SQLite backend', () => {
  it("expands a chain oldest first, finds items by id, and never shows one owner's records to another", async () => {
    const { store } = storeAt({ now: 1_000 });
    await store.save('key:a', record('r1'));
    await store.save('key:a', record('r2', ['r1']));
    await store.save('key:a', record('r3', ['r1', 'r2']));
    const history = await store.history('key:a', 'r3');
    expect(history?.chain).toEqual(['r1', 'r2', 'r3']);
    expect(history?.items.map((i) => i.id)).toEqual(['in_r1', 'msg_r1', 'in_r2', 'msg_r2', 'in_r3', 'msg_r3']);
    expect(await store.item('key:a', 'msg_r2')).toMatchObject({ role: 'assistant' });
    expect(await store.item('key:a', 'in_r1')).toMatchObject({ role: 'user' });
    expect(await store.load('key:b', 'r1')).toBeUndefined();
    expect(await store.history('key:b', 'r3')).toBeUndefined();
    expect(await store.item('key:b', 'msg_r2')).toBeUndefined();
    expect(await store.delete('key:b', 'r1')).toBe(false);
  });

  it('a chain with a deleted response before it is not found; a deleted item is gone', async () => {
    const { store } = storeAt({ now: 1_000 });
    await store.save('o', record('r1'));
    await store.save('o', record('r2', ['r1']));
    expect(await store.delete('o', 'r1')).toBe(true);
    expect(await store.delete('o', 'r1')).toBe(false);
    expect(await store.history('o', 'r2')).toBeUndefined();
    expect(await store.item('o', 'msg_r1')).toBeUndefined();
  });

  it('expires records after the retention, and the sweep keeps at most maxEntries, oldest out first', async () => {
    const clock = { now: 1_000 };
    const { store, backend } = storeAt(clock, { retentionSeconds: 10, maxEntries: 2 });
    await store.save('o', record('old'));
    clock.now += 5_000;
    await store.save('o', record('mid'));
    clock.now += 1;
    await store.save('o', record('new'));
    // Three records, two allowed: the oldest goes, though it has not expired yet.
    backend.sweep();
    expect(await store.load('o', 'old')).toBeUndefined();
    expect(await store.load('o', 'mid')).toBeDefined();
    // mid was written at 6 000 ms, with 10 s to live.
    clock.now = 16_000;
    expect(await store.load('o', 'mid')).toBeUndefined();
    expect(await store.load('o', 'new')).toBeDefined();
    await backend.close();
  });

  it('does not keep a record larger than maxBytes', async () => {
    const { store } = storeAt({ now: 1_000 }, { maxBytes: 1024 });
    await store.save('o', record('big', [], 'x'.repeat(2048)));
    await store.save('o', record('small'));
    expect(await store.load('o', 'big')).toBeUndefined();
    expect(await store.load('o', 'small')).toBeDefined();
  });
});

describe('the SQLite backend under a burst of writes', () => {
  const withFile = async (fn: (file: string) => Promise<void>) => {
    const dir = mkdtempSync(path.join(tmpdir(), 'switchyard-responses-'));
    try {
      await fn(path.join(dir, 'state.sqlite'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
  const rows = (file: string) => {
    const db = new DatabaseSync(file, { readOnly: true });
    try {
      const count = (table: string) => Number((db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n);
      return { responses: count('stored_responses'), items: count('stored_response_items') };
    } finally {
      db.close();
    }
  };

  it("writes one turn's puts together, each resolving once another connection (another instance) can read it", () =>
    withFile(async (file) => {
      const writer = new SqliteResponseBackend({ path: file, maxEntries: 1_000 });
      const reader = new SqliteResponseBackend({ path: file, maxEntries: 1_000 });
      const puts = Array.from({ length: 50 }, (_, i) => {
        const r = record(`r${i}`);
        return writer.put('o', r, JSON.stringify(r), [`in_r${i}`, `msg_r${i}`], 60_000).then(async () => (await reader.get('o', [r.id]))[0]?.id);
      });
      // Nothing is written during the turn that asked for it.
      expect(rows(file).responses).toBe(0);
      expect(await Promise.all(puts)).toEqual(Array.from({ length: 50 }, (_, i) => `r${i}`));
      expect(rows(file)).toEqual({ responses: 50, items: 100 });
      expect(await reader.responseOfItem('o', 'msg_r7')).toBe('r7');
      await writer.close();
      await reader.close();
    }));

  it('trims to maxEntries between timed sweeps, oldest first, taking their items along', () =>
    withFile(async (file) => {
      const clock = { now: 1_000 };
      const backend = new SqliteResponseBackend({ path: file, maxEntries: 100, now: () => clock.now });
      for (let turn = 0; turn < 21; turn++) {
        clock.now += 1;
        await Promise.all(
          Array.from({ length: 50 }, (_, i) => {
            const r = record(`t${turn}_${i}`);
            return backend.put('o', r, JSON.stringify(r), [`in_${r.id}`, `msg_${r.id}`], 3_600_000);
          }),
        );
      }
      // 1,050 written: the trim after the 1,000th kept the newest 100 (two turns), the turn after it adds 50.
      expect(rows(file)).toEqual({ responses: 150, items: 300 });
      expect(await backend.get('o', ['t17_49', 't18_0', 't20_49'])).toMatchObject([undefined, { id: 't18_0' }, { id: 't20_49' }]);
      expect(await backend.responseOfItem('o', 'msg_t17_49')).toBeUndefined();
      // A timed sweep counts the rows itself and trims to maxEntries.
      backend.sweep();
      expect(rows(file)).toEqual({ responses: 100, items: 200 });
      await backend.close();
    }));

  it('a sweep deletes expired responses and exactly their items', () =>
    withFile(async (file) => {
      const clock = { now: 1_000 };
      const backend = new SqliteResponseBackend({ path: file, maxEntries: 100, now: () => clock.now });
      const put = (id: string, ttl: number) => {
        const r = record(id);
        return backend.put('o', r, JSON.stringify(r), [`in_${id}`, `msg_${id}`], ttl);
      };
      await Promise.all([put('short', 1_000), put('long', 60_000)]);
      clock.now += 2_000;
      backend.sweep();
      expect(rows(file)).toEqual({ responses: 1, items: 2 });
      expect(await backend.responseOfItem('o', 'msg_long')).toBe('long');
      expect(await backend.responseOfItem('o', 'msg_short')).toBeUndefined();
      await backend.close();
    }));
});
