/**
 * The load generator: closed loops (each connection sends its next request when the previous
 * answer has ended), with latencies in microseconds. Load runs use autocannon, whose client costs
 * the shared load core less than half of what undici's does per request; single-connection runs
 * use undici, which also says when the first body byte arrived. Every run stops at a deadline,
 * and the single-connection ones at a request count too.
 */
import autocannon from 'autocannon';
import { Pool } from 'undici';
import { KEY } from './servers.ts';

const HEADERS = { 'content-type': 'application/json', authorization: `Bearer ${KEY}` };
const MESSAGES = [
  { role: 'system', content: 'You are terse.' },
  { role: 'user', content: 'Say hello to the benchmark.' },
];

/** The request bodies: the hop forwards them as they are, the gateway maps alias `bench` to target `bench`. */
export const BODIES = {
  plain: JSON.stringify({ model: 'bench', messages: MESSAGES, temperature: 0 }),
  stream: JSON.stringify({ model: 'bench', messages: MESSAGES, temperature: 0, stream: true }),
  slow: JSON.stringify({ model: 'bench-slow', messages: MESSAGES, temperature: 0, stream: true }),
  /** A new prompt each request (autocannon replaces `[<id>]`): a cache miss every time. */
  miss: JSON.stringify({ model: 'bench', messages: [MESSAGES[0], { role: 'user', content: `${MESSAGES[1].content} [<id>]` }], temperature: 0 }),
  hold: JSON.stringify({ model: 'bench-hold', messages: MESSAGES, temperature: 0, stream: true }),
  /** The same prompt through the Responses API (translated to chat for the upstream; stored, as `store` defaults to true). */
  responses: JSON.stringify({ model: 'bench', instructions: MESSAGES[0].content, input: MESSAGES[1].content, temperature: 0 }),
};
const CHAT_PATH = '/v1/chat/completions';
/** Where a body other than chat completions goes. */
export const PATHS: Partial<Record<keyof typeof BODIES, string>> = { responses: '/v1/responses' };

export interface LoadOptions {
  body: string;
  connections: number;
  seconds: number;
  /** At most this many requests in all (default: no limit but the deadline). */
  maxRequests?: number;
  /** Start the connections' loops spread over this many ms, so that 1,000 do not knock at once. */
  rampMs?: number;
  /** The request's path (default chat completions). */
  path?: string;
}

export interface LoadResult {
  /** Requests answered 200 with a complete body (a stream: ending in `[DONE]`, no error event). */
  completed: number;
  errors: number;
  /** What went wrong, counted by kind (`HTTP 502`, `UND_ERR_SOCKET`, `stream error event`...). */
  errorKinds: Record<string, number>;
  /** Wall time from the first request to the last answer's end, in seconds. */
  seconds: number;
  /** Of completed requests, in ms: until the whole answer, and until its first body byte. */
  latencies: number[];
  firstBytes: number[];
}

/** A complete stream: ends with `[DONE]` and holds no error event. */
const completeStream = (body: string): boolean => body.endsWith('data: [DONE]\n\n') && !body.includes('"error"');

/**
 * Connections opened at once. Node's listen backlog is 511: 1,000 connections opened together
 * overflow it, and the dropped SYNs wait a second for their retransmission (ListenOverflows in
 * /proc/net/netstat), which would measure the connection storm rather than the streams.
 */
const BATCH = 100;
const BATCH_GAP_MS = 100;

/**
 * Saturates `<url><path>` (default chat completions) with `connections` autocannon connections, each for
 * `seconds`; above 100 connections, in batches of 100 started 100 ms apart.
 */
export async function saturate(url: string, options: Omit<LoadOptions, 'maxRequests' | 'rampMs'>): Promise<LoadResult> {
  if (options.connections <= BATCH) return autocannonRun(url, options);
  const started = performance.now();
  const batches: Promise<LoadResult>[] = [];
  for (let i = 0; i * BATCH < options.connections; i++) {
    const connections = Math.min(BATCH, options.connections - i * BATCH);
    batches.push(new Promise((r) => setTimeout(r, i * BATCH_GAP_MS)).then(() => autocannonRun(url, { ...options, connections })));
  }
  const parts = await Promise.all(batches);
  const result: LoadResult = { completed: 0, errors: 0, errorKinds: {}, seconds: (performance.now() - started) / 1000, latencies: [], firstBytes: [] };
  for (const part of parts) {
    result.completed += part.completed;
    result.errors += part.errors;
    for (const [kind, n] of Object.entries(part.errorKinds)) result.errorKinds[kind] = (result.errorKinds[kind] ?? 0) + n;
    for (const ms of part.latencies) result.latencies.push(ms);
  }
  return result;
}

function autocannonRun(url: string, options: Omit<LoadOptions, 'maxRequests' | 'rampMs'>): Promise<LoadResult> {
  const { body, connections, seconds, path = CHAT_PATH } = options;
  const result: LoadResult = { completed: 0, errors: 0, errorKinds: {}, seconds: 0, latencies: [], firstBytes: [] };
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const run = autocannon(
      {
        url: `${url}${path}`,
        method: 'POST',
        headers: HEADERS,
        body,
        connections,
        duration: seconds,
        timeout: 30,
        verifyBody: body.includes('"stream":true') ? completeStream : undefined,
        idReplacement: body.includes('[<id>]'),
      },
      (err, summary) => {
        if (err) return reject(err);
        result.seconds = (performance.now() - started) / 1000;
        // 2xx answers whose body then failed verification were counted as completed too.
        result.completed -= summary.mismatches;
        const kinds: Record<string, number> = { 'connection error': summary.errors - summary.timeouts, timeout: summary.timeouts, 'incomplete stream': summary.mismatches };
        for (const [code, { count }] of Object.entries(summary.statusCodeStats)) if (!code.startsWith('2')) kinds[`HTTP ${code}`] = count;
        for (const [kind, count] of Object.entries(kinds)) {
          if (count === 0) continue;
          result.errorKinds[kind] = count;
          result.errors += count;
        }
        resolve(result);
      },
    );
    run.on('response', (_client: unknown, statusCode: number, _bytes: number, ms: number) => {
      if (statusCode < 200 || statusCode > 299) return;
      result.completed++;
      result.latencies.push(ms);
    });
  });
}

/** Runs `connections` closed loops over an undici pool against `<url><path>` (default chat completions). */
export async function closedLoop(url: string, options: LoadOptions): Promise<LoadResult> {
  const { body, connections, seconds, maxRequests = Number.POSITIVE_INFINITY, rampMs = 0, path = CHAT_PATH } = options;
  const streamed = body.includes('"stream":true');
  const pool = new Pool(url, { connections, headersTimeout: 30_000, bodyTimeout: 30_000, keepAliveTimeout: 60_000 });
  const result: LoadResult = { completed: 0, errors: 0, errorKinds: {}, seconds: 0, latencies: [], firstBytes: [] };
  const fail = (kind: string) => {
    result.errors++;
    result.errorKinds[kind] = (result.errorKinds[kind] ?? 0) + 1;
  };
  const started = performance.now();
  const deadline = started + seconds * 1000;
  let sent = 0;

  async function connectionLoop(index: number): Promise<void> {
    if (rampMs > 0) await new Promise((r) => setTimeout(r, (rampMs * index) / connections));
    while (performance.now() < deadline && sent < maxRequests) {
      sent++;
      const t0 = performance.now();
      try {
        const res = await pool.request({ method: 'POST', path, headers: HEADERS, body });
        let first = 0;
        let tail = '';
        for await (const chunk of res.body as AsyncIterable<Buffer>) {
          if (first === 0) first = performance.now();
          if (streamed) tail = (tail + chunk.toString('latin1')).slice(-400);
        }
        const end = performance.now();
        if (res.statusCode !== 200) fail(`HTTP ${res.statusCode}`);
        else if (streamed && !completeStream(tail)) fail('incomplete stream');
        else {
          result.completed++;
          result.latencies.push(end - t0);
          result.firstBytes.push(first - t0);
        }
      } catch (err) {
        fail((err as { code?: string }).code ?? String((err as Error).message).slice(0, 80));
      }
    }
  }

  await Promise.all(Array.from({ length: connections }, (_, i) => connectionLoop(i)));
  result.seconds = (performance.now() - started) / 1000;
  await pool.close();
  return result;
}
