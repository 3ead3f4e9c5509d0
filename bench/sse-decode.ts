/**
 * node bench/sse-decode.ts [root] [rounds]: bytes allocated and promoted per slow stream by the
 * upstream SSE decoding alone (sseJsonEvents over a Node stream: decoder, JSON.parse, queue,
 * reader), from --trace-gc-nvp. 500 streams at a time, each 20 bench events and `data: [DONE]`,
 * one chunk per event-loop turn with the reader waiting, as at 1,000 slow streams; 20 rounds.
 * `root` is a checkout whose dist/ is built (default: this one), so two commits compare.
 *
 * Why: bench/gc.ts measures the whole gateway at 1,000 slow streams, where a few KB per stream
 * are within its run-to-run spread on a busy machine; this counts one part of it, repeatably.
 * The figures include the PassThrough body and the events' own Buffers (the same in any commit).
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gcEvents } from './gc-trace.ts';

const CONCURRENT = 500;
const EVENTS = 20;
const root = path.resolve(process.argv[2] ?? path.join(path.dirname(fileURLToPath(import.meta.url)), '..'));
const rounds = Number(process.argv[3] ?? 20);

if (process.env.SSE_DECODE_CHILD !== '1') {
  const child = spawnSync(process.execPath, ['--trace-gc-nvp', fileURLToPath(import.meta.url), root, String(rounds)], {
    env: { ...process.env, SSE_DECODE_CHILD: '1' },
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
  if (child.status !== 0) throw new Error(`the measuring process failed:\n${child.stderr}`);
  let allocated = 0;
  let promoted = 0;
  for (const gc of gcEvents(child.stdout)) {
    allocated += gc.allocated;
    promoted += gc.promoted;
  }
  const streams = CONCURRENT * rounds;
  console.log(`${root}: ${Math.round(allocated / streams)} B allocated, ${Math.round(promoted / streams)} B promoted per slow stream (${streams} streams)`);
} else {
  const { sseJsonEvents } = await import(pathToFileURL(path.join(root, 'dist/src/providers/sse-events.js')).href);
  const event = (i: number) =>
    Buffer.from(
      `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1, model: 'bench', choices: [{ index: 0, delta: { content: ` w${i}` }, finish_reason: null }] })}\n\n`,
    );
  const stream = async (): Promise<number> => {
    const body = new PassThrough();
    const events: AsyncIterable<{ raw: string }> = sseJsonEvents(body, (err: unknown) => err);
    let i = 0;
    const write = () => {
      if (i < EVENTS) {
        body.write(event(i++));
        setImmediate(write);
      } else body.end('data: [DONE]\n\n');
    };
    setImmediate(write);
    let read = 0;
    for await (const e of events) read += e.raw.length;
    return read;
  };
  for (let r = 0; r < rounds; r++) await Promise.all(Array.from({ length: CONCURRENT }, stream));
}
