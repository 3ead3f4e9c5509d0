/**
 * node --max-semi-space-size=1024 --min-semi-space-size=1024 bench/stream-events.ts: heap bytes
 * per streamed event after it is decoded, as a slow stream has them (one event per turn of the
 * event loop): the real Attempt translating a scripted upstream (verbatim translator), primed,
 * written by writeAnswer in the chat protocol to a client on a loopback socket, in this process.
 *
 * Why: at 1,000 slow streams every per-event allocation counts 20 times per stream, but
 * bench/gc.ts (whole streams on a loaded machine) and bench/alloc.ts (fast streams, several events
 * a turn) move by ±1 KB a stream from run to run. Here the semi-spaces are large enough that no GC
 * runs in a window: the heap's growth is what was allocated. Streams of 10 and of 110 events are
 * read (200 a window, 5 windows each); the difference of the median windows, a hundredth of it,
 * is the cost per event, the driver's and the client's own included (a setImmediate and a promise
 * a turn, the client's HTTP parsing): compare versions, not absolutes.
 */
import { request, Agent, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import v8 from 'node:v8';
import type { GatewayError } from '../src/errors.ts';
import { chatProtocol } from '../src/ingress/chat/protocol.ts';
import type { ChatCompletionChunk, ChatCompletionRequest } from '../src/openai-types.ts';
import { Attempt } from '../src/pipeline/attempt.ts';
import { Exchange } from '../src/pipeline/exchange.ts';
import { chatBody, chunkOf, fakeProvider, silentLog, targetOf, TIMEOUTS } from '../src/pipeline/testing.ts';
import { writeAnswer } from '../src/server/writer.ts';

const STREAMS = 200;
const WINDOWS = 5;
const LONG_TIMEOUTS = { ...TIMEOUTS, idleMs: 60_000, totalMs: 60_000 };
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

/** The stream the server answers next, and its upstream once the request arrived. */
let next: { events: number; started: (upstream: Upstream) => void } | undefined;

const server = createServer(async (req, res) => {
  req.resume();
  if (!next) throw new Error('a request nobody asked for');
  const upstream = new Upstream(next.events);
  const body: ChatCompletionRequest = chatBody({ stream: true });
  const x = new Exchange({
    id: 'req_bench',
    services: { redact: (text) => text, upstreamBodyLimit: 1 << 20 },
    errorAnswer: (error) => ({ status: error.status, body: error.toJSON() }),
    operation: 'chat',
    ingress: 'chat',
    headers: {},
    body,
    res,
    log: silentLog(),
  });
  x.begin(chatProtocol.begin(body, { id: 'req_bench', headers: {} }));
  const provider = {
    ...fakeProvider(async () => ({ kind: 'stream', headers: {}, events: { [Symbol.asyncIterator]: () => upstream } })),
    createStreamTranslator: () => ({ verbatim: true, push: (event: unknown) => (event as { data: ChatCompletionChunk }).data }),
  };
  const attempt = new Attempt(x, targetOf(provider), LONG_TIMEOUTS);
  await attempt.send();
  attempt.translate();
  next.started(upstream);
  await writeAnswer(x, await attempt.complete(), (err) => err as GatewayError);
  attempt.close();
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const { port } = server.address() as AddressInfo;
const agent = new Agent({ keepAlive: true, maxSockets: 1 });

async function stream(events: number): Promise<void> {
  const started = new Promise<Upstream>((resolve) => {
    next = { events, started: resolve };
  });
  const answered = new Promise<string>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/v1/chat/completions', agent }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (part: string) => {
        text += part;
      });
      res.on('end', () => resolve(text));
    });
    req.on('error', reject);
    req.end('{}');
  });
  const upstream = await started;
  for (let i = 0; i < events; i++) {
    await turn();
    upstream.fire();
  }
  const text = await answered;
  if (!text.endsWith('data: [DONE]\n\n')) throw new Error(`an incomplete stream: ${text.slice(-200)}`);
}

/** Heap growth per stream of `events` events, the median of the windows. */
async function perStream(events: number): Promise<number> {
  const windows: number[] = [];
  for (let w = 0; w < WINDOWS; w++) {
    const before = v8.getHeapStatistics().used_heap_size;
    for (let i = 0; i < STREAMS; i++) await stream(events);
    windows.push((v8.getHeapStatistics().used_heap_size - before) / STREAMS);
  }
  return windows.toSorted((a, b) => a - b)[Math.floor(WINDOWS / 2)];
}

for (let i = 0; i < 300; i++) await stream(20); // warm-up: the code optimised
const short = await perStream(10);
const long = await perStream(110);
console.log(`per stream of 10 events: ${Math.round(short)} B; per event: ${Math.round((long - short) / 100)} B`);
server.close();
agent.destroy();
