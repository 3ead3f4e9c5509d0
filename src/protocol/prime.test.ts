/** primeStream: waits for the first item, replays it once, forwards return(), and is idempotent. */
import { describe, expect, it, vi } from 'vitest';
import { primeStream } from './prime.ts';

async function collect<T>(source: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of source) out.push(item);
  return out;
}

/** A hand-made source that counts next() calls and records return(). */
function countingSource(items: number[]) {
  const calls = { next: 0, return: [] as unknown[] };
  let i = 0;
  const iterator: AsyncIterator<number> = {
    async next() {
      calls.next++;
      return i < items.length ? { done: false, value: items[i++] } : { done: true, value: undefined };
    },
    async return(value?: unknown) {
      calls.return.push(value);
      return { done: true, value: undefined };
    },
  };
  return { calls, source: { [Symbol.asyncIterator]: () => iterator } as AsyncIterable<number> };
}

describe('primeStream', () => {
  it('reads exactly one item before it resolves', async () => {
    const { calls, source } = countingSource([1, 2, 3]);
    await primeStream(source);
    expect(calls.next).toBe(1);
  });

  it('replays the first item once, then continues with the rest of the source', async () => {
    const { calls, source } = countingSource([1, 2, 3]);
    const primed = await primeStream(source);
    expect(await collect(primed)).toEqual([1, 2, 3]);
    expect(calls.next).toBe(4); // 1 while priming, then 2, 3 and done: the first is not read again
  });

  it('the first item is the very object the source produced', async () => {
    const first = { id: 'chunk-1' };
    const primed = await primeStream(
      (async function* () {
        yield first;
      })(),
    );
    const it = primed[Symbol.asyncIterator]();
    expect((await it.next()).value).toBe(first);
    expect(await it.next()).toEqual({ done: true, value: undefined });
  });

  it('an error before the first item rejects the prime itself', async () => {
    const boom = new Error('429 before the first byte');
    const source = (async function* () {
      if (boom) throw boom;
      yield 1;
    })();
    await expect(primeStream(source)).rejects.toBe(boom);
  });

  it('an error after the first item surfaces while reading, after the replayed item', async () => {
    const boom = new Error('stream broke');
    const source = (async function* () {
      yield 'a';
      yield 'b';
      throw boom;
    })();
    const primed = await primeStream(source);
    const seen: string[] = [];
    await expect(
      (async () => {
        for await (const x of primed) seen.push(x);
      })(),
    ).rejects.toBe(boom);
    expect(seen).toEqual(['a', 'b']);
  });

  it('an empty source primes fine and ends at once', async () => {
    const primed = await primeStream((async function* () {})());
    expect(await collect(primed)).toEqual([]);
  });

  it('return() is forwarded to the source (the consumer stopped early)', async () => {
    const { calls, source } = countingSource([1, 2, 3]);
    const primed = await primeStream(source);
    for await (const x of primed) {
      expect(x).toBe(1);
      break;
    }
    expect(calls.return).toHaveLength(1);
    expect(calls.next).toBe(1);
  });

  it('return(value) passes the value on and resolves to what the source answered', async () => {
    const ret = vi.fn(async (value?: unknown) => ({ done: true as const, value }));
    const source = { [Symbol.asyncIterator]: () => ({ next: async () => ({ done: false, value: 1 }), return: ret }) } as AsyncIterable<number>;
    const primed = (await primeStream(source))[Symbol.asyncIterator]();
    await expect(primed.return?.('bye')).resolves.toEqual({ done: true, value: 'bye' });
    expect(ret).toHaveBeenCalledWith('bye');
  });

  it('a source generator runs its finally block when the consumer leaves early', async () => {
    let cleaned = false;
    const source = (async function* () {
      try {
        yield 1;
        yield 2;
      } finally {
        cleaned = true;
      }
    })();
    const primed = await primeStream(source);
    for await (const _ of primed) break;
    expect(cleaned).toBe(true);
  });

  it('return() on a source without one resolves done', async () => {
    const source = { [Symbol.asyncIterator]: () => ({ next: async () => ({ done: false, value: 1 }) }) } as AsyncIterable<number>;
    const primed = (await primeStream(source))[Symbol.asyncIterator]();
    await expect(primed.return?.()).resolves.toEqual({ done: true, value: undefined });
  });

  it('priming a primed stream is a no-op: same object, nothing more read', async () => {
    const { calls, source } = countingSource([1, 2]);
    const once = await primeStream(source);
    const twice = await primeStream(once);
    expect(twice).toBe(once);
    expect(calls.next).toBe(1);
    expect(await collect(twice)).toEqual([1, 2]);
  });

  it('is its own async iterator', async () => {
    const primed = await primeStream(countingSource([1]).source);
    expect(primed[Symbol.asyncIterator]()).toBe(primed);
  });
});
