/**
 * A stream on its way to the client, recorded for the exact cache: each chunk passes on as it
 * came, its JSON kept (the one copy made: the client's writer may change the chunk after), and
 * the answer's JSON handed over once the stream finished whole.
 */
import { streamJson } from './entry.ts';
import type { ChatCompletionChunk } from '../openai-types.ts';

/** Entries bigger than this are not kept from a stream (a 10 MB answer is no cache's business). */
const MAX_STREAM_BYTES = 4 << 20;

/** Passes a stream through; `done` gets its CachedAnswer JSON once it finished whole. */
export async function* recorded(chunks: AsyncIterable<ChatCompletionChunk>, done: (answerJson: string) => void): AsyncIterable<ChatCompletionChunk> {
  const kept: string[] = [];
  let bytes = 0;
  let finished = false;
  for await (const chunk of chunks) {
    if (bytes <= MAX_STREAM_BYTES) {
      const json = JSON.stringify(chunk);
      bytes += json.length;
      kept.push(json);
    }
    if (!finished) for (const c of chunk.choices) if (c.finish_reason != null) finished = true;
    yield chunk;
  }
  // Reached only when the stream ended without an error; a stream cut short is not an answer to keep.
  if (finished && bytes <= MAX_STREAM_BYTES) done(streamJson(kept));
}
