/**
 * Builds the chat.completion.chunk objects of one streamed answer, for stream translators:
 * one id, model and creation time for every chunk (a translator may update them as the
 * upstream reveals its own), and `role: assistant` on each choice's first delta, whichever
 * chunk that is. A translator that emits nothing until the first real content keeps the
 * attempt retryable until then.
 */
import type { ChatCompletionChunk, FinishReason, Usage } from '../openai-types.ts';
import type { ProviderCall } from '../plugin-api.ts';

export type ChunkDelta = ChatCompletionChunk['choices'][number]['delta'];

export class ChunkBuilder {
  id: string;
  model: string;
  created = Math.floor(Date.now() / 1000);
  readonly #roleSent = new Set<number>();

  constructor(call: Pick<ProviderCall, 'requestId' | 'model'>) {
    this.id = `chatcmpl-${call.requestId}`;
    this.model = call.model;
  }

  /** Has choice `index` had its first delta (the one that carries the role)? */
  started(index = 0): boolean {
    return this.#roleSent.has(index);
  }

  delta(delta: ChunkDelta, finish: FinishReason | null = null, index = 0, logprobs: unknown = null): ChatCompletionChunk {
    if (!this.#roleSent.has(index)) {
      this.#roleSent.add(index);
      delta = { role: 'assistant', ...delta };
    }
    return { id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.model, choices: [{ index, delta, logprobs, finish_reason: finish }] };
  }

  /** The usage-only chunk that ends a stream (the core keeps it from clients that did not ask). */
  usage(usage: Usage): ChatCompletionChunk {
    return { id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.model, choices: [], usage };
  }
}
