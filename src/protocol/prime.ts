/**
 * Waits for a stream's first item, so that a failure before the first byte reaches the client
 * can still be retried or answered with a proper HTTP error. The result replays that item.
 */
export async function primeStream<T>(source: AsyncIterable<T>): Promise<AsyncIterable<T>> {
  if (source instanceof PrimedStream) return source;
  const it = source[Symbol.asyncIterator]();
  return new PrimedStream(it, await it.next());
}

/**
 * A stream whose first item was read: one object per stream (methods on the class, not closures
 * per stream), kept for the stream's whole life.
 */
class PrimedStream<T> implements AsyncIterableIterator<T> {
  readonly #it: AsyncIterator<T>;
  #first: IteratorResult<T> | undefined;

  constructor(it: AsyncIterator<T>, first: IteratorResult<T>) {
    this.#it = it;
    this.#first = first;
  }

  next(): Promise<IteratorResult<T>> {
    const first = this.#first;
    if (first === undefined) return this.#it.next();
    this.#first = undefined;
    return Promise.resolve(first);
  }

  return(value?: unknown): Promise<IteratorResult<T>> {
    const it = this.#it;
    return it.return ? it.return(value) : Promise.resolve({ done: true, value: undefined as T });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}
