/**
 * The request ledger on both engines, one battery: the SQLite state file and a real PostgreSQL
 * server started by this file (test/helpers/postgres.ts). Each request that reached the
 * upstream or was refused by a limit is one row with exact fields; reports and the keys' spend
 * are read from the rows; a retried batch books nothing twice. Then what only one engine
 * shows: SQLite keeps its rows across a restart. (PostgreSQL stopped and started under traffic:
 * test/faults/postgres-outage.test.ts, in the fault battery.)
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from 'switchyard-gateway/kit/testing';
import { mkdtempSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { adminGet, chat, eventually, startUsageUpstream, todayStart, type UsageUpstream } from '../governance/helpers.ts';
import { startPostgres, type PostgresServer } from '../helpers/postgres.ts';
import { usageReport } from '../../src/admin/usage-table.ts';
import { RequestLedger } from '../../src/ledger/book.ts';
import type { LedgerEngine } from '../../src/ledger/engine.ts';
import { POSTGRES_MIGRATIONS, SQLITE_MIGRATIONS } from '../../src/ledger/migrations.ts';
import { PostgresLedger } from '../../src/ledger/postgres.ts';
import type { LedgerRow } from '../../src/ledger/record.ts';
import { SqliteLedger } from '../../src/ledger/sqlite.ts';

const ADMIN = 'sk-admin-ledger-0123456789';
const FREE = 'sk-ledger-free-0123456789';
const TINY = 'sk-ledger-tiny-0123456789';
const SUM = 'sk-ledger-sum-0123456789';
const CACHED = 'sk-ledger-cached-0123456789';
/** 10 prompt tokens (2 cached), 5 completion, at $1000 and $2000 per million (cached at the input rate): $0.02. */
const COST = (10 * 1000 + 5 * 2000) / 1e6;

let upstream: UsageUpstream;
let postgres: PostgresServer;

beforeAll(async () => {
  upstream = await startUsageUpstream({ prompt: 10, completion: 5, cached: 2 });
  postgres = await startPostgres();
}, 90_000);
afterAll(async () => {
  await upstream?.close();
  await postgres?.destroy();
});

function configOf(ledger: string): string {
  return `keys:
  - { name: free, key: ${FREE}, team: lab, models: ["*"] }
  - { name: tiny, key: ${TINY}, models: ["*"], limits: { rpm: 1 } }
  - { name: sum, key: ${SUM}, models: ["*"] }
  - { name: cached, key: ${CACHED}, models: ["*"] }
teams:
  lab: {}
admin:
  keys: [{ name: ops, key: ${ADMIN} }]
state:
  ledger: ${ledger}
providers:
  up: { plugin: openai, baseUrl: "${upstream.baseUrl}" }
models:
  m: { retry: { attempts: 1 }, targets: [{ provider: up, model: house-model, price: { input: 1000, output: 2000 } }] }
  kept: { retry: { attempts: 1 }, targets: [{ provider: up, model: house-model, price: { input: 1000, output: 2000 } }] }
pipeline:
  - auth
  - validate
  - route
  - stage: cache
    options: { apply: [{ models: [kept] }] }
  - retry
  - transform-response
  - log
`;
}

interface Engine {
  name: string;
  /** The gateway's `state.ledger` and the files it reads. */
  gateway(): Promise<{ ledger: string; files: Record<string, string> }>;
  /** A bare engine on a store of its own, for the idempotency checks. */
  bare(): Promise<LedgerEngine>;
  /** An engine on a store of its own that knows only the first migration, and SQL on that store. */
  firstSchema(): Promise<{ engine: LedgerEngine; raw: (sql: string) => Promise<Record<string, unknown>[]> }>;
  /** The same store as the last firstSchema(), with every migration. */
  reopen(): Promise<LedgerEngine>;
  table: string;
  migrations: string;
}

let lastStore = '';

let databases = 0;
const ENGINES: Engine[] = [
  {
    name: 'SQLite',
    // Both engines here run where they do not by default (SQLite on the writer thread, PostgreSQL
    // on the serving thread); the defaults serve the governance tests and the fault battery.
    gateway: async () => ({ ledger: '{ flushMs: 20, thread: true }', files: {} }),
    bare: async () => new SqliteLedger(path.join(mkdtempSync(path.join(tmpdir(), 'switchyard-ledger-')), 'state.sqlite')),
    firstSchema: async () => {
      lastStore = path.join(mkdtempSync(path.join(tmpdir(), 'switchyard-ledger-')), 'state.sqlite');
      const where = lastStore;
      return {
        engine: new SqliteLedger(where, SQLITE_MIGRATIONS.slice(0, 1)),
        raw: async (sql) => {
          const db = new DatabaseSync(where);
          try {
            if (sql.startsWith('SELECT')) return db.prepare(sql).all();
            db.exec(sql);
            return [];
          } finally {
            db.close();
          }
        },
      };
    },
    reopen: async () => new SqliteLedger(lastStore),
    table: 'ledger_requests',
    migrations: 'ledger_migrations',
  },
  {
    name: 'PostgreSQL',
    // The URL from a file, as a password would be kept.
    gateway: async () => ({ ledger: '{ flushMs: 20, thread: false, postgres: { url: "${file:pg-url}" } }', files: { 'pg-url': await postgres.createDatabase(`gw_${++databases}`) } }),
    bare: async () => new PostgresLedger({ url: await postgres.createDatabase(`bare_${++databases}`) }),
    firstSchema: async () => {
      lastStore = await postgres.createDatabase(`first_${++databases}`);
      const url = lastStore;
      return {
        engine: new PostgresLedger({ url }, POSTGRES_MIGRATIONS.slice(0, 1)),
        raw: async (sql) => {
          const client = new pg.Client({ connectionString: url });
          await client.connect();
          try {
            return (await client.query(sql)).rows;
          } finally {
            await client.end();
          }
        },
      };
    },
    reopen: async () => new PostgresLedger({ url: lastStore }),
    table: 'switchyard_requests',
    migrations: 'switchyard_ledger_migrations',
  },
];

const ask = (key: string, tag: string, stream = false) => chat(gatewayUrl(), key, { model: 'm', stream, messages: [{ role: 'user', content: tag }] });
let current: TestGateway | undefined;
const gatewayUrl = () => current!.url;

/** The request as the ledger booked it, once written. */
const booked = (id: string) =>
  eventually(async () => {
    const r = await adminGet(gatewayUrl(), `/admin/v1/requests/${id}`, ADMIN);
    expect(r.status).toBe(200);
    return r.body;
  });

function row(at: Partial<LedgerRow> & { entry: string; id: string }): LedgerRow {
  return {
    at: Date.now(),
    key: 'k',
    team: null,
    model: 'm',
    provider: 'up',
    targetModel: 'house-model',
    ingress: 'chat',
    operation: 'chat',
    status: 200,
    errorCode: null,
    inputTokens: 10,
    cachedTokens: 0,
    cacheWriteTokens: 0,
    outputTokens: 5,
    costNano: 20_000_000,
    costNote: null,
    usageSource: 'reported',
    durationMs: 3,
    ttftMs: null,
    attempts: 1,
    cache: null,
    savedNano: null,
    ...at,
  };
}

describe.each(ENGINES)('request ledger on $name', (engine) => {
  beforeAll(async () => {
    const { ledger, files } = await engine.gateway();
    current = await startTestGateway(configOf(ledger), { files });
  }, 60_000);
  afterAll(async () => {
    await current?.close();
    current = undefined;
  });

  it('books plain, streamed and refused requests with their exact fields', async () => {
    const plain = await ask(FREE, 'plain');
    const streamed = await ask(FREE, 'streamed', true);
    const first = await ask(TINY, 'tiny');
    const refused = await ask(TINY, 'tiny');
    expect([plain.status, streamed.status, first.status, refused.status]).toEqual([200, 200, 200, 429]);
    const common = {
      object: 'gateway.request',
      created_at: expect.any(Number),
      created_at_ms: expect.any(Number),
      duration_ms: expect.any(Number),
      ingress: 'chat',
      operation: 'chat',
      cache: null,
      saved_usd: null,
    };
    const answered = {
      ...common,
      model: 'm',
      provider: 'up',
      target_model: 'house-model',
      status: 200,
      error_code: null,
      usage: { input_tokens: 10, input_cached_tokens: 2, input_cache_write_tokens: 0, output_tokens: 5, source: 'reported' },
      cost_usd: COST,
      cost_unknown_reason: null,
      attempts: 1,
    };
    expect(await booked(plain.headers.get('x-request-id')!)).toEqual({ ...answered, id: plain.headers.get('x-request-id'), key: 'free', team: 'lab', ttft_ms: null });
    const stream = await booked(streamed.headers.get('x-request-id')!);
    expect(stream).toEqual({ ...answered, id: streamed.headers.get('x-request-id'), key: 'free', team: 'lab', ttft_ms: expect.any(Number) });
    expect(stream.ttft_ms).toBeLessThanOrEqual(stream.duration_ms);
    expect(await booked(refused.headers.get('x-request-id')!)).toEqual({
      ...common,
      id: refused.headers.get('x-request-id'),
      key: 'tiny',
      team: null,
      model: 'm',
      provider: null,
      target_model: null,
      status: 429,
      error_code: 'rate_limit_exceeded',
      usage: null,
      cost_usd: null,
      cost_unknown_reason: 'refused',
      ttft_ms: null,
      attempts: 0,
    });
    const when = (await booked(plain.headers.get('x-request-id')!)).created_at_ms;
    expect(Math.abs(when - Date.now())).toBeLessThan(10_000);
    // `switchyard usage --request ID` prints the same row, one field a line.
    const printed = await usageReport({ url: gatewayUrl(), adminKey: ADMIN, by: 'key', days: 1, request: plain.headers.get('x-request-id')! });
    expect(printed).toMatch(/^key\s+free$/m);
    expect(printed).toMatch(new RegExp(`^cost_usd\\s+${COST}$`, 'm'));
    expect(printed).toMatch(/^usage\s+\{"input_tokens":10,"input_cached_tokens":2,"input_cache_write_tokens":0,"output_tokens":5,"source":"reported"\}$/m);
    const missing = await adminGet(gatewayUrl(), '/admin/v1/requests/req_never_seen', ADMIN);
    expect(missing.status).toBe(404);
    expect((await adminGet(gatewayUrl(), `/admin/v1/requests/${plain.headers.get('x-request-id')}`, undefined)).status).toBe(401);
  });

  it('a key without limits shows its spend, and its report is the sum of its rows', async () => {
    const answers = await Promise.all(Array.from({ length: 5 }, (_, i) => ask(SUM, `sum-${i}`, i % 2 === 1)));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
    const rows = await Promise.all(answers.map((a) => booked(a.headers.get('x-request-id')!)));
    const total = rows.reduce((s, r) => s + r.cost_usd, 0);
    const usage = await adminGet(gatewayUrl(), `/admin/v1/usage?start_time=${todayStart()}&group_by=key&keys=sum`, ADMIN);
    const [result] = usage.body.data.flatMap((b: { results: unknown[] }) => b.results);
    expect(result).toMatchObject({
      key: 'sum',
      num_model_requests: 5,
      input_tokens: rows.reduce((s, r) => s + r.usage.input_tokens, 0),
      output_tokens: rows.reduce((s, r) => s + r.usage.output_tokens, 0),
      amount: { value: expect.closeTo(total, 12) },
      unpriced_requests: 0,
    });
    expect(total).toBeCloseTo(5 * COST, 12);
    const keys = await adminGet(gatewayUrl(), '/admin/v1/keys', ADMIN);
    expect(keys.body.data.find((k: { name: string }) => k.name === 'sum')).toMatchObject({ limits: { rpm: null }, budget: null, spent_usd: expect.closeTo(total, 12), spent_period: 'total' });
    const console = await adminGet(gatewayUrl(), '/admin/v1/console/keys', ADMIN);
    expect(console.body.data.find((k: { name: string }) => k.name === 'sum')).toMatchObject({ spent_usd: expect.closeTo(total, 12) });
  });

  it('a cache hit is booked free, with the cost it saved, in the row and the usage report', async () => {
    const question = { model: 'kept', messages: [{ role: 'user', content: `same question on ${engine.name}` }] };
    const miss = await chat(gatewayUrl(), CACHED, question);
    const hit = await chat(gatewayUrl(), CACHED, question);
    expect([miss.headers.get('x-switchyard-cache'), hit.headers.get('x-switchyard-cache')]).toEqual(['miss', 'hit']);
    expect(await booked(miss.headers.get('x-request-id')!)).toMatchObject({ key: 'cached', model: 'kept', cache: 'miss', saved_usd: null, cost_usd: COST, attempts: 1 });
    expect(await booked(hit.headers.get('x-request-id')!)).toMatchObject({
      key: 'cached',
      model: 'kept',
      provider: 'up',
      target_model: 'house-model',
      status: 200,
      cache: 'hit',
      saved_usd: COST,
      cost_usd: 0,
      cost_unknown_reason: null,
      usage: null,
      attempts: 0,
    });
    const usage = await adminGet(gatewayUrl(), `/admin/v1/usage?start_time=${todayStart()}&group_by=key,model&keys=cached`, ADMIN);
    const [result] = usage.body.data.flatMap((b: { results: unknown[] }) => b.results);
    // The hit is no model request: one request (the miss), its tokens and cost; the hit and its saving apart.
    expect(result).toMatchObject({
      key: 'cached',
      model: 'kept',
      num_model_requests: 1,
      input_tokens: 10,
      amount: { value: expect.closeTo(COST, 12) },
      cache_hits: 1,
      saved_amount: { value: expect.closeTo(COST, 12), currency: 'usd' },
    });
    // The key's spend is the miss alone.
    const keys = await adminGet(gatewayUrl(), '/admin/v1/keys', ADMIN);
    expect(keys.body.data.find((k: { name: string }) => k.name === 'cached').spent_usd).toBeCloseTo(COST, 12);
  });

  it('a database of the first schema is migrated: its rows are kept, new rows carry the cache columns', async () => {
    const { engine: old, raw } = await engine.firstSchema();
    await old.migrate();
    await raw(
      `INSERT INTO ${engine.table} (entry, id, at, day, key, model, ingress, operation, status, cost_nano, usage_source, input_tokens, duration_ms, attempts) VALUES ('old1', 'r-old', ${Date.now()}, '${new Date().toISOString().slice(0, 10)}', 'k', 'm', 'chat', 'chat', 200, 20000000, 'reported', 10, 3, 1)`,
    );
    await old.close();
    const current = await engine.reopen();
    await current.migrate();
    expect(await current.request('r-old')).toMatchObject({ entry: 'old1', key: 'k', costNano: 20_000_000, cache: null, savedNano: null });
    await current.insert([row({ entry: 'new1', id: 'r-new', cache: 'hit', savedNano: 7_000, costNano: 0, usageSource: null, inputTokens: null, outputTokens: null })]);
    expect(await current.request('r-new')).toMatchObject({ cache: 'hit', savedNano: 7_000, costNano: 0 });
    const day = new Date().toISOString().slice(0, 10);
    expect(await current.usageRows(day, day)).toEqual([expect.objectContaining({ key: 'k', requests: 1, costNano: 20_000_000, priced: 1, cacheHits: 1, savedNano: 7_000 })]);
    expect((await raw(`SELECT version FROM ${engine.migrations} ORDER BY version`)).map((r) => Number(r.version))).toEqual([1, 2]);
    await current.close();
  });

  it('a batch written twice, or retried after a write that committed but failed, books each row once', async () => {
    const bare = await engine.bare();
    await bare.migrate();
    await bare.migrate();
    const batch = [row({ entry: 'e1', id: 'r1' }), row({ entry: 'e2', id: 'r2' }), row({ entry: 'e3', id: 'r3', key: 'other' })];
    await bare.insert(batch);
    await bare.insert(batch);
    const day = new Date().toISOString().slice(0, 10);
    const requests = async () => (await bare.usageRows(day, day)).reduce((n, r) => n + r.requests, 0);
    expect(await requests()).toBe(3);
    expect(await bare.request('r2')).toEqual(batch[1]);
    // The writer's retry: the first write commits, then reports a failure (a timeout after COMMIT).
    let failNext = true;
    const flaky: LedgerEngine = {
      kind: bare.kind,
      migrate: () => bare.migrate(),
      async insert(rows) {
        await bare.insert(rows);
        if (failNext) {
          failNext = false;
          throw new Error('timeout after commit');
        }
      },
      request: (id) => bare.request(id),
      usageRows: (from, to) => bare.usageRows(from, to),
      spendByKey: () => bare.spendByKey(),
      spendSince: (starts) => bare.spendSince(starts),
      deleteBefore: (day, limit) => bare.deleteBefore(day, limit),
      close: () => bare.close(),
    };
    const ledger = new RequestLedger({ engine: flaky, log: pino({ level: 'silent' }), flushMs: 10 });
    await ledger.start();
    for (const entry of ['e4', 'e5']) ledger.record(row({ entry, id: entry }));
    await ledger.flush();
    expect(ledger.stats).toMatchObject({ queued: 2, up: false });
    await eventually(() => expect(ledger.stats).toMatchObject({ queued: 0, written: 2, up: true }));
    expect(await requests()).toBe(5);
    expect(await ledger.spendByKey()).toEqual(
      new Map([
        ['k', 4 * 0.02],
        ['other', 0.02],
      ]),
    );
    await ledger.close();
  });
});

describe('SQLite ledger across a restart', () => {
  it('keeps its rows: a request is found after the gateway restarts on the same state file', async () => {
    current = await startTestGateway(configOf('{ flushMs: 20 }'));
    const answer = await ask(FREE, 'before-restart');
    const id = answer.headers.get('x-request-id')!;
    const before = await booked(id);
    const file = current.configFile;
    await current.close();
    current = await startTestGateway({ file }, {});
    try {
      expect((await adminGet(gatewayUrl(), `/admin/v1/requests/${id}`, ADMIN)).body).toEqual(before);
      const keys = await adminGet(gatewayUrl(), '/admin/v1/keys', ADMIN);
      expect(keys.body.data.find((k: { name: string }) => k.name === 'free').spent_usd).toBeCloseTo(COST, 12);
    } finally {
      await current.close();
      current = undefined;
    }
  });
});
