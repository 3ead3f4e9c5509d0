/**
 * node --max-semi-space-size=1024 --min-semi-space-size=1024 bench/stream-events.ts: heap bytes
 * per streamed event on the attempt's side, as a slow stream has them (one event per turn of the
 * event loop). The real Attempt (src/pipeline/testing.ts's exchange and target) translates a
 * scripted upstream with a verbatim translator; the chunks are primed and read by `for await`.
 *
 * Why: at 1,000 slow streams every per-event allocation counts 20 times per stream, but
 * bench/gc.ts (whole streams on a loaded machine) and bench/alloc.ts (fast streams, several events
 * a turn) move by ±1 KB a stream from run to run. Here the semi-spaces are large enough that no GC
 * runs in a window: the heap's growth is what was allocated. Streams of 10 and of 110 events are
 * read (300 a window, 5 windows each); the difference, a hundredth of it, is the cost per event,
 * the driver's own included (a setImmediate and a promise a turn: compare versions, not absolutes).
 */
import v8 from 'node:v8';
import { Attempt } from '../src/pipeline/attempt.ts';
import { chatBody, chunkOf, exchangeFor, fakeProvider, sessionOf, targetOf, TIMEOUTS } from '../src/pipeline/testing.ts';
import type { ChatCompletionChunk } from '../src/openai-types.ts';

const STREAMS = 300;
const WINDOWS = 5;
const TIMEOUTS_LONG = { ...TIMEOUTS, idleMs: 60_000, totalMs: 60_000 };
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** An upstream whose events arrive one per fire(), each as a parsed SSE event with its text. */
class Upstream implements AsyncIterator<unknown> {
  #sent = 0;
  #waiter: ((r: IteratorResult<unknown>) => void) | undefined;
  readonly #events: number;

  constructor(events: number) {
    this.#events = events;
  }

  next(): Promise<IteratorResult<unknown>> {
    if (this.#sent >= this.#events) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve) => {
      this.#waiter = resolve;
    });
  }

  return(): Promise<IteratorResult<unknown>> {
    return Promise.resolve({ value: undefined, done: true });
  }

  fire(): void {
    const waiter = this.#waiter;
    this.#waiter = undefined;
    if (!waiter) return;
    const chunk = chunkOf(`word ${this.#sent++}`);
    if (this.#sent === this.#events) chunk.choices[0].finish_reason = 'stop';
    waiter({ value: { data: chunk, raw: JSON.stringify(chunk) }, done: false });
  }
}

async function stream(events: number): Promise<void> {
  const upstream = new Upstream(events);
  const provider = {
    ...fakeProvider(async () => ({ kind: 'stream', headers: {}, events: { [Symbol.asyncIterator]: () => upstream } })),
    createStreamTranslator: () => ({ verbatim: true, push: (event: unknown) => (event as { data: ChatCompletionChunk }).data }),
  };
  const x = exchangeFor({ session: sessionOf(chatBody({ stream: true })) });
  const attempt = new Attempt(x, targetOf(provider), TIMEOUTS_LONG);
  await attempt.send();
  attempt.translate();
  const primed = attempt.complete();
  await turn();
  upstream.fire();
  const response = await primed;
  if (response.kind !== 'stream') throw new Error(`expected a stream, got ${response.kind}`);
  let read = 0;
  const reading = (async () => {
    for await (const _ of response.chunks) read++;
  })();
  for (let i = 1; i <= events; i++) {
    await turn();
    upstream.fire();
  }
  await reading;
  attempt.close();
  if (read !== events) throw new Error(`read ${read} of ${events} events`);
}

/** Heap growth per stream of `events` events, per window. */
async function perStream(events: number): Promise<number[]> {
  const windows: number[] = [];
  for (let w = 0; w < WINDOWS; w++) {
    const before = v8.getHeapStatistics().used_heap_size;
    for (let i = 0; i < STREAMS; i++) await stream(events);
    windows.push((v8.getHeapStatistics().used_heap_size - before) / STREAMS);
  }
  return windows;
}

for (let i = 0; i < STREAMS; i++) await stream(20); // warm-up: the code optimised
const short = await perStream(10);
const long = await perStream(110);
const median = (values: number[]): number => values.toSorted((a, b) => a - b)[Math.floor(values.length / 2)];
console.log(`per stream of 10 events: ${short.map(Math.round).join(' ')} B; of 110: ${long.map(Math.round).join(' ')} B`);
console.log(`per event (median windows): ${Math.round((median(long) - median(short)) / 100)} B`);
