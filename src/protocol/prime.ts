const PRIMED = Symbol('switchyard.primed');

type Primed<T> = AsyncIterableIterator<T> & { [PRIMED]: true };

/**
 * Waits for a stream's first item, so that a failure before the first byte reaches the client
 * can still be retried or answered with a proper HTTP error. The result replays that item.
 */
export async function primeStream<T>(source: AsyncIterable<T>): Promise<AsyncIterable<T>> {
  if ((source as Partial<Primed<T>>)[PRIMED]) return source;
  const it = source[Symbol.asyncIterator]();
  const first = await it.next();
  let replayed = false;
  const primed: Primed<T> = {
    [PRIMED]: true,
    next() {
      if (replayed) return it.next();
      replayed = true;
      return Promise.resolve(first);
    },
    return(value?: unknown) {
      return it.return ? it.return(value) : Promise.resolve({ done: true, value: undefined as T });
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
  return primed;
}
