/** What the governance suites share: an upstream that reports fixed usage and counts what is in flight, real gateway processes, admin API calls. */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ROOT } from '../helpers/repo.ts';

export interface FixedUsage {
  prompt: number;
  completion: number;
  cached?: number;
}

/** Per tag (the first message's content): requests received, in flight now, the most ever in flight at once. */
export interface TagCount {
  requests: number;
  streamed: number;
  inFlight: number;
  maxInFlight: number;
}

export interface UsageUpstream {
  /** http://127.0.0.1:port/v1, the openai provider's baseUrl. */
  readonly baseUrl: string;
  count(tag: string): TagCount;
  /** Hold answers to `tag` this long before answering (to keep requests in flight). */
  delay(tag: string, ms: number): void;
  /** Hold answers to `tag` until the returned function is called. */
  hold(tag: string): () => void;
  close(): Promise<void>;
}

/**
 * An OpenAI-compatible upstream whose every answer reports the same usage, plain or streamed
 * (a usage chunk at the end, as OpenAI sends with include_usage). Requests are counted by the
 * content of their first message, so each test tags its own.
 */
export async function startUsageUpstream(usage: FixedUsage): Promise<UsageUpstream> {
  const counts = new Map<string, TagCount>();
  const delays = new Map<string, number>();
  const gates = new Map<string, Promise<void>>();
  const countOf = (tag: string): TagCount => {
    let c = counts.get(tag);
    if (!c) counts.set(tag, (c = { requests: 0, streamed: 0, inFlight: 0, maxInFlight: 0 }));
    return c;
  };
  const usageObject = { prompt_tokens: usage.prompt, completion_tokens: usage.completion, total_tokens: usage.prompt + usage.completion, prompt_tokens_details: { cached_tokens: usage.cached ?? 0 } };
  const server: Server = createServer(async (req, res) => {
    const parts: Buffer[] = [];
    for await (const part of req) parts.push(part as Buffer);
    const body = JSON.parse(Buffer.concat(parts).toString('utf8'));
    const tag = String(body.messages?.[0]?.content ?? '');
    const c = countOf(tag);
    c.requests++;
    if (body.stream) c.streamed++;
    c.inFlight++;
    c.maxInFlight = Math.max(c.maxInFlight, c.inFlight);
    res.once('close', () => c.inFlight--);
    const wait = delays.get(tag);
    if (wait) await sleep(wait);
    await gates.get(tag);
    const base = { id: 'chatcmpl-fixed', created: 1_700_000_000, model: body.model, system_fingerprint: null };
    if (!body.stream) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          ...base,
          object: 'chat.completion',
          choices: [{ index: 0, message: { role: 'assistant', content: 'ok', refusal: null }, logprobs: null, finish_reason: 'stop' }],
          usage: usageObject,
        }),
      );
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const chunk = (choices: unknown[], extra: object = {}) => `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices, ...extra })}\n\n`;
    res.write(chunk([{ index: 0, delta: { role: 'assistant', content: 'o' }, logprobs: null, finish_reason: null }]));
    res.write(chunk([{ index: 0, delta: { content: 'k' }, logprobs: null, finish_reason: 'stop' }]));
    res.write(chunk([], { usage: usageObject }));
    res.end('data: [DONE]\n\n');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    count: (tag) => ({ ...countOf(tag) }),
    delay: (tag, ms) => void delays.set(tag, ms),
    hold(tag) {
      let release!: () => void;
      gates.set(tag, new Promise<void>((resolve) => (release = resolve)));
      return release;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const BIN = path.join(ROOT, 'bin/switchyard.mjs');

export interface GatewayProcess {
  /** http://127.0.0.1:port */
  readonly url: string;
  readonly child: ChildProcess;
  /** Everything it wrote so far (JSON log lines). */
  output(): string;
  alive(): boolean;
  /** SIGTERM (graceful) by default; resolves when it has exited. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** `switchyard --config FILE --port 0` as an operator runs it, once its listening line is out (within `startMs`: more on a busy machine). */
export async function spawnGateway(configFile: string, startMs = 45_000): Promise<GatewayProcess> {
  const child = spawn(process.execPath, [BIN, '--config', configFile, '--port', '0', '--host', '127.0.0.1', '--no-watch'], {
    cwd: path.dirname(configFile),
    env: { ...process.env, OPENAI_API_KEY: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  let m: RegExpExecArray | null = null;
  for (const deadline = Date.now() + startMs; !(m = /Switchyard listening on (http:\/\/127\.0\.0\.1:\d+)\/v1/.exec(out)) && Date.now() < deadline && child.exitCode === null; ) await sleep(20);
  if (!m) {
    child.kill('SIGKILL');
    throw new Error(`the gateway did not start (exit ${child.exitCode}):\n${out}`);
  }
  return {
    url: m[1]!,
    child,
    output: () => out,
    alive: () => child.exitCode === null && child.signalCode === null,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill(signal);
      await exited;
    },
  };
}

export interface Answer {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: parsed JSON that the assertions read field by field
  body: any;
}

/** A chat request without the SDK (the exact status and headers); a stream is read to its end. */
export async function chat(url: string, apiKey: string, body: Record<string, unknown>): Promise<Answer> {
  const res = await fetch(`${url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await res.text();
  const json = res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text;
  return { status: res.status, headers: res.headers, body: json };
}

/** GET an admin endpoint; `text` is the raw body (for leak checks). */
export async function adminGet(url: string, pathAndQuery: string, adminKey: string | undefined): Promise<Answer & { text: string }> {
  const res = await fetch(`${url}${pathAndQuery}`, { headers: adminKey === undefined ? {} : { authorization: `Bearer ${adminKey}` } });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: JSON.parse(text), text };
}

/** Retries `check` until it stops throwing (settling runs after the answer is sent). */
export async function eventually<T>(check: () => T | Promise<T>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await sleep(25);
    }
  }
}

/** Midnight UTC of today, in unix seconds: the start of today's usage bucket. */
export const todayStart = (): number => Math.floor(Date.now() / 86_400_000) * 86_400;
