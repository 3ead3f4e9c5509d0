/**
 * The built-in offline provider: deterministic answers with usage, plain and streamed, no
 * network. It makes a fresh clone useful with zero keys and is the fake behind the benchmark.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { defineProvider, type ChatCompletion, type ChatCompletionChunk } from 'switchyard-gateway';
import { DEFAULT_REPLY, mockChunks, mockCompletion } from './generate.ts';
import { DEFAULT_EMBEDDING_DIMENSIONS, MAX_EMBEDDING_DIMENSIONS, mockEmbeddings } from './embeddings.ts';

export interface MockOptions {
  /** The answer text (default: a greeting that says it comes from the mock). */
  reply?: string;
  /** Delay before the answer (or its first chunk), to imitate a real model. */
  latencyMs?: number;
  /** Delay between streamed chunks. */
  chunkDelayMs?: number;
  /** Length of the fake embedding vectors (default 256); a request's `dimensions` overrides it. */
  embeddingDimensions?: number;
}

async function* paced(chunks: ChatCompletionChunk[], delayMs: number, signal: AbortSignal): AsyncGenerator<ChatCompletionChunk> {
  for (let i = 0; i < chunks.length; i++) {
    if (i > 0 && delayMs > 0) await sleep(delayMs, undefined, { signal });
    yield chunks[i];
  }
}

export default defineProvider<MockOptions>({
  apiVersion: 2,
  kind: 'provider',
  id: 'mock',
  description: 'Offline deterministic answers (the embedded default)',
  optionsSchema: {
    type: 'object',
    additionalProperties: false,
    properties: {
      reply: { type: 'string' },
      latencyMs: { type: 'integer', minimum: 0 },
      chunkDelayMs: { type: 'integer', minimum: 0 },
      embeddingDimensions: { type: 'integer', minimum: 1, maximum: MAX_EMBEDDING_DIMENSIONS, default: DEFAULT_EMBEDDING_DIMENSIONS },
    },
  },
  capabilities: { streaming: true, tools: true, images: true, responseFormat: true, embeddings: true, extraParams: 'all' },
  create(options) {
    const reply = options.reply ?? DEFAULT_REPLY;
    const latencyMs = options.latencyMs ?? 0;
    const chunkDelayMs = options.chunkDelayMs ?? 0;
    return {
      async send(call) {
        if (latencyMs > 0) await sleep(latencyMs, undefined, { signal: call.signal });
        if (!call.stream) return { kind: 'json', body: mockCompletion(call.request, call.model, reply), headers: {} };
        return { kind: 'stream', events: paced(mockChunks(call.request, call.model, reply), chunkDelayMs, call.signal), headers: {} };
      },
      toCompletion: (body) => body as ChatCompletion,
      createStreamTranslator: () => ({ push: (event) => event as ChatCompletionChunk }),
      async embed(call) {
        if (latencyMs > 0) await sleep(latencyMs, undefined, { signal: call.signal });
        return mockEmbeddings(call.embedding, call.model, options.embeddingDimensions);
      },
    };
  },
});
