/**
 * The exact cache's own work on a miss, measured in this process as main-thread CPU per request
 * (process.threadCpuUsage): the request's key (canonical JSON and SHA-256) and keeping the answer
 * (a completion, and a 20-chunk stream as the stage records it) in the memory store. The
 * gateway's whole miss path is the `gateway, cache on` variant of `npm run bench`.
 *
 *   node bench/cache-miss.ts
 */
import { cacheKey } from '../src/cache/key.ts';
import { completionJson, entryJson } from '../src/cache/entry.ts';
import { MemoryCache } from '../src/cache/memory.ts';
import { recorded } from '../src/cache/record.ts';
import type { ChatCompletion, ChatCompletionChunk, ChatCompletionRequest } from '../src/openai-types.ts';

const cpu = (): number => {
  const { user, system } = process.threadCpuUsage?.() ?? process.cpuUsage();
  return user + system;
};

/** µs per call of `fn(i)`, after a warm-up. */
async function timed(n: number, fn: (i: number) => unknown): Promise<number> {
  for (let i = 0; i < n / 5; i++) await fn(i);
  const t0 = cpu();
  for (let i = 0; i < n; i++) await fn(i);
  return (cpu() - t0) / n;
}

const request = (i: number): ChatCompletionRequest =>
  ({
    model: 'bench',
    temperature: 0,
    messages: [
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: `Say hello to the benchmark. [${i}]` },
    ],
  }) as ChatCompletionRequest;
const WORDS = 'the quick brown fox jumps over the lazy dog again and again until the bench ends now'.split(' ');
const completion: ChatCompletion = {
  id: 'chatcmpl-bench',
  object: 'chat.completion',
  created: 1_700_000_000,
  model: 'bench',
  choices: [{ index: 0, message: { role: 'assistant', content: WORDS.join(' ') }, finish_reason: 'stop', logprobs: null }],
  usage: { prompt_tokens: 12, completion_tokens: 18, total_tokens: 30 },
} as ChatCompletion;
const chunks: ChatCompletionChunk[] = WORDS.slice(0, 18).map(
  (w, i) =>
    ({
      id: 'chatcmpl-bench',
      object: 'chat.completion.chunk',
      created: 1_700_000_000,
      model: 'bench',
      choices: [{ index: 0, delta: i === 0 ? { role: 'assistant', content: w } : { content: ` ${w}` }, finish_reason: null }],
    }) as ChatCompletionChunk,
);
chunks.push({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1_700_000_000, model: 'bench', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] } as ChatCompletionChunk);
chunks.push({
  id: 'chatcmpl-bench',
  object: 'chat.completion.chunk',
  created: 1_700_000_000,
  model: 'bench',
  choices: [],
  usage: { prompt_tokens: 12, completion_tokens: 18, total_tokens: 30 },
} as ChatCompletionChunk);

async function* source(): AsyncIterable<ChatCompletionChunk> {
  for (const c of chunks) yield c;
}

const N = 20_000;
const store = new MemoryCache(64 << 20);
const entry = { provider: 'up', model: 'bench', costUsd: 0.0001, storedAt: 0 };
const keyUs = await timed(N, (i) => cacheKey('key:bench', 'bench', request(i)));
const requestUs = await timed(N, (i) => request(i));
const completionUs = await timed(N, (i) => store.set(`c${i}`, entryJson(completionJson(completion), entry), 3_600_000));
const passUs = await timed(N / 4, async () => {
  for await (const _ of source());
});
const streamUs = await timed(N / 4, async (i) => {
  for await (const _ of recorded(source(), (answer) => store.set(`s${i}`, entryJson(answer, entry), 3_600_000)));
});
console.log(
  JSON.stringify({
    cpu: 'main thread',
    keyUs: +(keyUs - requestUs).toFixed(2),
    keepCompletionUs: +completionUs.toFixed(2),
    keepStreamUs: +(streamUs - passUs).toFixed(2),
  }),
);
