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
