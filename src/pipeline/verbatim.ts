/**
 * A stream's current chunk and the upstream's own JSON text for it, kept while that text still
 * says the chunk exactly, so that a chat client can be sent it instead of the chunk serialised
 * again (Attempt.verbatimJson). Only for a translator that declares itself verbatim, and only
 * while no stage transforms the answer (a transform may change a chunk in place).
 */
import type { ChatCompletionChunk } from '../openai-types.ts';
import type { SseJsonEvent } from '../providers/http-body.ts';
import { chunkIsNormal } from '../protocol/normalize.ts';

export class VerbatimChunk {
  #chunk: ChatCompletionChunk | undefined;
  #json = '';

  /**
   * The translator made `out` of `event`: true (and remembered) when `out` is the event's parsed
   * data, as normalising would leave it, without usage (the attempt prices it: `usage.cost`), and
   * its text fits one SSE `data:` line. Otherwise the last one is forgotten.
   */
  take(out: ChatCompletionChunk | ChatCompletionChunk[], event: unknown): out is ChatCompletionChunk {
    const { data, raw } = event as SseJsonEvent;
    if (out === data && raw !== undefined && !Array.isArray(out) && !out.usage && chunkIsNormal(out) && !raw.includes('\n')) {
      this.#chunk = out;
      this.#json = raw;
      return true;
    }
    this.#chunk = undefined;
    return false;
  }

  forget(): void {
    this.#chunk = undefined;
  }

  /** The upstream's text for `chunk` when it is the current chunk taken verbatim. */
  jsonOf(chunk: ChatCompletionChunk): string | undefined {
    return chunk === this.#chunk ? this.#json : undefined;
  }
}
