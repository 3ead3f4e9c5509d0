/**
 * Is a stream held whole? The upstream's `bench-hold` stream pauses HOLD_PAUSE_MS after its 18
 * content events, before its finish and usage events; whatever content the client has received
 * by then passed through while the stream was still open. A chunk that arrived more than half
 * the pause before the stream's end arrived before the upstream sent its finish event (loopback
 * takes far less than that).
 */
import { Pool } from 'undici';
import { BODIES } from './load.ts';
import { KEY } from './servers.ts';

export const HOLD_PAUSE_MS = 300;

export interface HoldCheck {
  server: string;
  streams: number;
  /** Content characters of all streams, and those received before the upstream's finish event. */
  contentChars: number;
  charsBeforeFinish: number;
  /** Streams whose first content arrived before the finish event. */
  streamsWithEarlyContent: number;
  /** Median ms from the request to its first content, and to the stream's end. */
  firstContentMs: number;
  endMs: number;
  errors: number;
}

/** The text of the `delta.content` fields in a piece of SSE (whole events only). */
function contentOf(events: string): string {
  let text = '';
  for (const line of events.split('\n')) {
    if (!line.startsWith('data: {')) continue;
    const choice = (JSON.parse(line.slice(6)) as { choices?: { delta?: { content?: string } }[] }).choices?.[0];
    text += choice?.delta?.content ?? '';
  }
  return text;
}

const middle = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1] ?? Number.NaN;

export async function holdCheck(server: { name: string; url: string }, streams: number): Promise<HoldCheck> {
  const pool = new Pool(server.url, { connections: 1, bodyTimeout: 10_000, headersTimeout: 10_000 });
  const result: HoldCheck = { server: server.name, streams, contentChars: 0, charsBeforeFinish: 0, streamsWithEarlyContent: 0, firstContentMs: 0, endMs: 0, errors: 0 };
  const firsts: number[] = [];
  const ends: number[] = [];
  try {
    for (let i = 0; i < streams; i++) {
      const t0 = performance.now();
      const res = await pool.request({ method: 'POST', path: '/v1/chat/completions', headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` }, body: BODIES.hold });
      // Each whole event's content with the time its last byte arrived.
      const arrivals: [number, string][] = [];
      let buffer = '';
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        buffer += chunk.toString('utf8');
        const cut = buffer.lastIndexOf('\n\n');
        if (cut < 0) continue;
        arrivals.push([performance.now(), contentOf(buffer.slice(0, cut))]);
        buffer = buffer.slice(cut + 2);
      }
      const end = performance.now();
      if (res.statusCode !== 200 || !arrivals.length) {
        result.errors++;
        continue;
      }
      const finishSent = end - HOLD_PAUSE_MS / 2;
      const early = arrivals.filter(([t]) => t < finishSent).reduce((n, [, text]) => n + text.length, 0);
      result.contentChars += arrivals.reduce((n, [, text]) => n + text.length, 0);
      result.charsBeforeFinish += early;
      if (early > 0) result.streamsWithEarlyContent++;
      firsts.push((arrivals.find(([, text]) => text.length > 0)?.[0] ?? end) - t0);
      ends.push(end - t0);
    }
  } finally {
    await pool.close();
  }
  result.firstContentMs = middle(firsts);
  result.endMs = middle(ends);
  return result;
}
