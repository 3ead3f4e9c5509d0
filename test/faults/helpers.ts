/**
 * What the fault battery shares: an exact price per request and client traffic that keeps
 * running while a fault is played. The upstream (test/governance/helpers.ts) answers every
 * request with 18 prompt and 5 completion tokens; a two-byte message with `max_tokens: 5`
 * reserves exactly that, so at $1000/$2000 per million every request reserves and costs
 * $0.028, and spend can be compared with what the upstream served to the nano-dollar.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chat, type Answer } from '../governance/helpers.ts';

/** 18 × $1000 + 5 × $2000 per million tokens, in nano-USD: what a request reserves and costs. */
export const COST_NANO = 18 * 1000 * 1000 + 5 * 2000 * 1000;
export const COST = COST_NANO / 1e9;
/** The model section every battery config uses (`up` is the counting upstream). */
export const MODEL = '  m: { retry: { attempts: 1 }, targets: [{ provider: up, model: house-model, price: { input: 1000, output: 2000 } }] }';

/**
 * A battery gateway.yaml: the `head` sections (server, log, state), one paying key with `budget`,
 * an admin key, the counting upstream as provider `up`, and MODEL.
 */
export function faultConfig(o: { head: string[]; key: string; budget: string; admin: string; upstream: string }): string {
  return [
    ...o.head,
    'keys:',
    `  - { name: payer, key: ${o.key}, models: ["*"], budget: ${o.budget} }`,
    'admin:',
    `  keys: [{ name: ops, key: ${o.admin} }]`,
    'providers:',
    `  up: { plugin: openai, baseUrl: "${o.upstream}" }`,
    'models:',
    MODEL,
  ].join('\n');
}

/** `yaml` written as gateway.yaml in a new temporary folder; its path. */
export function writeConfig(prefix: string, yaml: string): string {
  const file = path.join(mkdtempSync(path.join(tmpdir(), prefix)), 'gateway.yaml');
  writeFileSync(file, yaml);
  return file;
}

/** Compares USD figures at the precision of a nano-dollar. */
export const nano = (usd: number): number => Math.round(usd * 1e9);

export interface Traffic {
  /** Every answer's status, in the order they came. */
  readonly statuses: number[];
  /** The error code of every answer that was not a 200. */
  readonly codes: string[];
  /** The x-request-id of every answer. */
  readonly ids: string[];
  /** When each 200 was read to its end (epoch ms). */
  readonly servedAt: number[];
  /** Requests sent and not answered (or failed) yet. */
  outstanding(): number;
  /** Resolves once every client has stopped (on a `stopOn` code) by itself. */
  ended(): Promise<void>;
  /** Stops sending; resolves once every client has its last answer (or error). */
  stop(): Promise<void>;
}

/**
 * `clients` loops, each sending one request at a time tagged `tag` (two bytes) to whatever
 * `url()` answers now; odd clients stream. A request that fails at the socket (the gateway was
 * killed) counts as status 0; an answer with an error code in `stopOn` ends that client (a
 * budget's final `insufficient_quota`, not the `rate_limit_exceeded` of a budget that others'
 * reservations fill for now).
 */
export function runTraffic(url: () => string, key: string, tag: string, clients: number, options: { stopOn?: string[]; pauseAfterErrorMs?: number } = {}): Traffic {
  if (Buffer.byteLength(tag) !== 2) throw new Error('the battery prices a two-byte message');
  const statuses: number[] = [];
  const codes: string[] = [];
  const ids: string[] = [];
  const servedAt: number[] = [];
  let running = true;
  let outstanding = 0;
  const loops = Array.from({ length: clients }, async (_, i) => {
    while (running) {
      outstanding++;
      const answer: Answer | undefined = await chat(url(), key, { model: 'm', max_tokens: 5, stream: i % 2 === 1, messages: [{ role: 'user', content: tag }] }).catch(() => undefined);
      outstanding--;
      const status = answer?.status ?? 0;
      statuses.push(status);
      const id = answer?.headers.get('x-request-id');
      if (id) ids.push(id);
      if (status === 200) {
        servedAt.push(Date.now());
        continue;
      }
      const code = String(answer?.body?.error?.code ?? 'no answer');
      codes.push(code);
      if (options.stopOn?.includes(code)) return;
      if (status === 0 || status >= 429) await new Promise((r) => setTimeout(r, options.pauseAfterErrorMs ?? 200));
    }
  });
  return {
    statuses,
    codes,
    ids,
    servedAt,
    outstanding: () => outstanding,
    ended: () => Promise.all(loops).then(() => undefined),
    async stop() {
      running = false;
      await Promise.all(loops);
    },
  };
}
