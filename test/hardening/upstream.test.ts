/**
 * A misbehaving OpenAI-compatible upstream behind the `openai` plugin: it echoes the provider
 * key it received (raw, base64, base64url, URL-encoded, a 12-character fragment) in every error
 * field, compresses unasked, sends 40 MB, never ends a line, says 200 with an error, sends bytes
 * that are not UTF-8, keeps a stream alive with comments only, or never answers. The client must
 * get a catalogued error (or an intact stream), never the key, never binary garbage, and on time.
 */
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logLineFor, startTestGateway, type TestGateway } from '../../src/kit/testing/index.ts';
import {
  type Behaviour,
  CLIENT_KEY,
  type ClientAnswer,
  chunk,
  completion,
  echoForms,
  envelopeProblem,
  exposedText,
  findSecrets,
  ODD_SECRET,
  postChat,
  type ScriptedUpstream,
  sleep,
  startScriptedUpstream,
  UPSTREAM_SECRET,
  writeAll,
} from './helpers.ts';

const SECRETS = { 'providers.up.apiKey': UPSTREAM_SECRET, 'providers.odd.apiKey': ODD_SECRET, 'keys[0].key': CLIENT_KEY };
const STATUSES = [400, 404, 429, 500] as const;
/** What the client gets for each upstream status (errors.ts's failure table). */
const CLIENT_STATUS: Record<number, [number, string]> = { 400: [400, 'upstream_bad_request'], 404: [502, 'upstream_model_not_found'], 429: [429, 'rate_limit_exceeded'], 500: [502, 'upstream_error'] };
const FORMS = ['raw', 'base64', 'base64url', 'urlencoded', 'fragment'] as const;

const json = (x: Parameters<Behaviour>[0], status: number, body: unknown, headers: Record<string, string> = {}) => {
  x.res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body));
};
const sse = (x: Parameters<Behaviour>[0], headers: Record<string, string> = {}) => x.res.writeHead(200, { 'content-type': 'text/event-stream', ...headers });

/** An OpenAI error envelope that echoes the received key in `form` in every field. */
function echoError(bearer: string, form: (typeof FORMS)[number], type = 'invalid_request_error') {
  const f = echoForms(bearer);
  return { error: { message: `Incorrect API key provided: ${f[form]}. You sent Authorization: Bearer ${f[form]}`, type, param: f[form], code: f[form] } };
}

/** Every form at once, as a proxy that dumps the request might. */
function echoAll(bearer: string) {
  const f = echoForms(bearer);
  return {
    error: { message: `upstream said: raw=${f.raw} b64=${f.base64} b64url=${f.base64url} url=${f.urlencoded} frag=${f.fragment}`, type: 'server_error', param: null, code: `key_${f.fragment}` },
  };
}

const behaviours: Record<string, Behaviour> = {
  'good-stream': (x) => {
    sse(x);
    x.res.end(`${chunk('Hel')}${chunk('lo', 'stop')}data: [DONE]\n\n`);
  },
  'plain-param-400': (x) => json(x, 400, { error: { message: "Invalid type for 'messages[0].content'.", type: 'invalid_request_error', param: 'messages[0].content', code: 'invalid_type' } }),
  'ok-but-error': (x) => json(x, 200, echoAll(x.bearer)),
  'gzip-json': (x) => json(x, 200, gzipSync(JSON.stringify(completion('compressed'))), { 'content-encoding': 'gzip' }),
  'br-json': (x) => json(x, 200, brotliCompressSync(JSON.stringify(completion('compressed'))), { 'content-encoding': 'br' }),
  'gzip-error-500': (x) => json(x, 500, gzipSync(JSON.stringify(echoAll(x.bearer))), { 'content-encoding': 'gzip' }),
  'gzip-sse': (x) => {
    sse(x, { 'content-encoding': 'gzip' });
    x.res.end(gzipSync(`${chunk('Hel')}${chunk('lo', 'stop')}data: [DONE]\n\n`));
  },
  /** `data: aaaa…` without a newline, as fast as the gateway reads, up to 64 MB, then silence. */
  endless: async (x) => {
    sse(x);
    await writeAll(x.res, 'data: {"choices":"');
    const block = Buffer.alloc(256 * 1024, 'a');
    for (let sent = 0; sent < 64 * 1024 * 1024; sent += block.length) await writeAll(x.res, block);
    await sleep(20_000);
  },
  'bad-utf8': (x) => {
    sse(x);
    const [before, after] = chunk('caf\u0000 ok').split('\\u0000');
    x.res.write(Buffer.concat([Buffer.from(before), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from(after)]));
    x.res.end(`${chunk('', 'stop')}data: [DONE]\n\n`);
  },
  /** A valid two-byte and three-byte character, each split across two writes. */
  'split-utf8': async (x) => {
    sse(x);
    const bytes = Buffer.from(chunk('héllo €'));
    const e = bytes.indexOf(Buffer.from('é'));
    const euro = bytes.indexOf(Buffer.from('€'));
    for (const [from, to] of [
      [0, e + 1],
      [e + 1, euro + 2],
      [euro + 2, bytes.length],
    ]) {
      await writeAll(x.res, bytes.subarray(from, to));
      await sleep(30);
    }
    x.res.end(`${chunk('', 'stop')}data: [DONE]\n\n`);
  },
  'comments-after-chunk': async (x) => {
    sse(x);
    await writeAll(x.res, chunk('Hel'));
    for (let i = 0; i < 100; i++) {
      await sleep(100);
      await writeAll(x.res, ': keep-alive\n\n');
    }
    x.res.end();
  },
  'comments-only': async (x) => {
    sse(x);
    for (let i = 0; i < 100; i++) {
      await writeAll(x.res, ': keep-alive\n\n');
      await sleep(100);
    }
    x.res.end();
  },
  'slow-words': async (x) => {
    sse(x);
    for (let i = 0; i < 50; i++) {
      await writeAll(x.res, chunk('w'));
      await sleep(100);
    }
    x.res.end(`${chunk('', 'stop')}data: [DONE]\n\n`);
  },
  hang: async () => {
    await sleep(20_000);
  },
};
for (const status of STATUSES) {
  for (const form of FORMS) behaviours[`echo-${status}-${form}`] = (x) => json(x, status, echoError(x.bearer, form), status === 429 ? { 'retry-after': '1' } : {});
  behaviours[`echo-${status}-all`] = (x) => json(x, status, echoAll(x.bearer));
}
for (const form of FORMS) {
  behaviours[`sse-error-first-${form}`] = (x) => {
    sse(x);
    x.res.end(`data: ${JSON.stringify(echoError(x.bearer, form, 'server_error'))}\n\n`);
  };
  behaviours[`sse-error-after-chunk-${form}`] = (x) => {
    sse(x);
    x.res.end(`${chunk('Hel')}data: ${JSON.stringify(echoError(x.bearer, form, 'server_error'))}\n\n`);
  };
}

const FAST = { retry: { attempts: 1 } };
function gatewayConfig(upstream: ScriptedUpstream, server: Record<string, unknown> = {}) {
  const models: Record<string, unknown> = {};
  for (const name of Object.keys(behaviours)) {
    models[name] = { ...FAST, targets: [{ provider: 'up', model: name }] };
    models[`odd-${name}`] = { ...FAST, targets: [{ provider: 'odd', model: name }] };
  }
  models.endless = { ...FAST, timeout: { totalMs: 5000 }, targets: [{ provider: 'up', model: 'endless' }] };
  models['comments-after-chunk'] = { ...FAST, timeout: { idleMs: 300, totalMs: 2000 }, targets: [{ provider: 'up', model: 'comments-after-chunk' }] };
  models['comments-only'] = { ...FAST, timeout: { idleMs: 300, totalMs: 2000 }, targets: [{ provider: 'up', model: 'comments-only' }] };
  models['comments-then-good'] = {
    ...FAST,
    timeout: { idleMs: 300, totalMs: 2000 },
    targets: [
      { provider: 'up', model: 'comments-only' },
      { provider: 'up', model: 'good-stream' },
    ],
  };
  models.hang = { ...FAST, timeout: { firstByteMs: 300 }, targets: [{ provider: 'up', model: 'hang' }] };
  return {
    server,
    keys: [{ name: 'client', key: CLIENT_KEY, models: ['*'] }],
    providers: {
      up: { plugin: 'openai', baseUrl: `${upstream.url}/v1`, apiKey: UPSTREAM_SECRET },
      odd: { plugin: 'openai', baseUrl: `${upstream.url}/v1`, apiKey: ODD_SECRET },
    },
    models,
  };
}

let upstream: ScriptedUpstream;
let t: TestGateway;
beforeAll(async () => {
  upstream = await startScriptedUpstream(behaviours);
  t = await startTestGateway(gatewayConfig(upstream));
});
afterAll(async () => {
  await t?.close();
  await upstream?.close();
});

/** Leaks of any configured secret in what the client got and in the request's log line. */
async function leaksOf(a: ClientAnswer): Promise<ReturnType<typeof findSecrets>> {
  const reqId = a.headers['x-request-id'];
  const line = reqId ? await logLineFor(t, reqId).catch(() => undefined) : undefined;
  return findSecrets(
    [
      { where: 'response', text: exposedText(a) },
      { where: 'log line', text: JSON.stringify(line ?? {}) },
    ],
    SECRETS,
  );
}

/** Binary junk reaching a client: replacement characters or control characters other than whitespace. */
function garbageIn(text: string): string | undefined {
  for (const ch of text) {
    const c = ch.codePointAt(0)!;
    if (c === 0xfffd || c < 0x09 || (c > 0x0d && c < 0x20) || c === 0x7f) return `U+${c.toString(16).padStart(4, '0')} in ${JSON.stringify(text.slice(0, 120))}`;
  }
  return undefined;
}

function expectEnvelope(a: ClientAnswer, status: number, code?: string) {
  expect(a.status, a.text.slice(0, 300)).toBe(status);
  expect(envelopeProblem(a.json), a.text.slice(0, 300)).toBeUndefined();
  if (code) expect(a.json.error.code).toBe(code);
  expect(a.headers['x-request-id']).toBeTruthy();
}

describe('an upstream that echoes the provider key', () => {
  for (const status of STATUSES) {
    it(`HTTP ${status}: no form of the key reaches the client or the log, plain or streamed`, async () => {
      const [clientStatus, code] = CLIENT_STATUS[status];
      for (const prefix of ['', 'odd-']) {
        for (const form of [...FORMS, 'all']) {
          for (const stream of [false, true]) {
            const model = `${prefix}echo-${status}-${form}`;
            const a = await postChat(t.url, { model, stream });
            const what = `${model}${stream ? ' (stream)' : ''}`;
            expect(a.status, `${what}: ${a.text.slice(0, 300)}`).toBe(clientStatus);
            expect(envelopeProblem(a.json), what).toBeUndefined();
            expect(a.json.error.code, what).toBe(code);
            expect(await leaksOf(a), what).toEqual([]);
            // The provider's words are kept, the key inside them replaced.
            expect(a.json.error.message, what).toContain('[REDACTED]');
            // A param that held (a form of) the key is not passed on.
            expect(a.json.error.param, what).toBeNull();
          }
        }
      }
    });
  }

  it('a param that is a plain field path is passed on', async () => {
    const a = await postChat(t.url, { model: 'plain-param-400' });
    expectEnvelope(a, 400, 'upstream_bad_request');
    expect(a.json.error.param).toBe('messages[0].content');
  });

  for (const form of FORMS) {
    it(`a stream whose first event is an error echoing the key (${form}) → an error status, nothing leaked`, async () => {
      for (const prefix of ['', 'odd-']) {
        const a = await postChat(t.url, { model: `${prefix}sse-error-first-${form}`, stream: true });
        expect(a.status).toBeGreaterThanOrEqual(400);
        expect(envelopeProblem(a.json), a.text.slice(0, 300)).toBeUndefined();
        expect(await leaksOf(a)).toEqual([]);
      }
    });

    it(`an error event after one chunk echoing the key (${form}) → the chunk, an error event, [DONE], nothing leaked`, async () => {
      for (const prefix of ['', 'odd-']) {
        const a = await postChat(t.url, { model: `${prefix}sse-error-after-chunk-${form}`, stream: true });
        expect(a.status).toBe(200);
        expect(JSON.parse(a.events[0]).choices[0].delta.content).toBe('Hel');
        const error = a.events.map((e) => (e === '[DONE]' ? undefined : JSON.parse(e))).find((e) => e?.error);
        expect(envelopeProblem(error)).toBeUndefined();
        expect(a.events.at(-1)).toBe('[DONE]');
        expect(await leaksOf(a)).toEqual([]);
      }
    });
  }

  it('a 200 whose body is an error echoing the key → 502, nothing leaked', async () => {
    for (const stream of [false, true]) {
      const a = await postChat(t.url, { model: 'ok-but-error', stream });
      expectEnvelope(a, 502, 'upstream_error');
      expect(await leaksOf(a)).toEqual([]);
    }
  });
});

describe('answers the gateway cannot read', () => {
  for (const model of ['gzip-json', 'br-json', 'gzip-error-500', 'gzip-sse']) {
    it(`${model}: a compressed body nobody asked for → 502 without binary garbage`, async () => {
      const a = await postChat(t.url, { model, stream: model.endsWith('sse') });
      expectEnvelope(a, 502, 'upstream_error');
      expect(garbageIn(a.json.error.message)).toBeUndefined();
      expect(await leaksOf(a)).toEqual([]);
      const line = await logLineFor(t, a.headers['x-request-id']);
      expect(garbageIn(String(line.errorMessage ?? ''))).toBeUndefined();
    });
  }

  it('an SSE line that never ends → 502, not unbounded buffering or a timeout', async () => {
    const a = await postChat(t.url, { model: 'endless', stream: true });
    expectEnvelope(a, 502, 'upstream_error');
    expect(garbageIn(a.json.error.message)).toBeUndefined();
  }, 30_000);

  it('bytes that are not UTF-8 inside a chunk → a stream the client can still decode, ending in [DONE]', async () => {
    const a = await postChat(t.url, { model: 'bad-utf8', stream: true });
    expect(a.status).toBe(200);
    expect(() => new TextDecoder('utf-8', { fatal: true }).decode(a.bytes)).not.toThrow();
    for (const e of a.events.slice(0, -1)) expect(() => JSON.parse(e), e).not.toThrow();
    expect(a.events.at(-1)).toBe('[DONE]');
  });

  it('a character split across two reads arrives whole', async () => {
    const a = await postChat(t.url, { model: 'split-utf8', stream: true });
    expect(a.status).toBe(200);
    const text = a.events
      .filter((e) => e !== '[DONE]')
      .map((e) => JSON.parse(e).choices?.[0]?.delta?.content ?? '')
      .join('');
    expect(text).toBe('héllo €');
  });
});

describe('upstreams that stall', () => {
  it('keep-alive comments after one chunk do not count as progress: cut after idleMs with a timeout event and [DONE]', async () => {
    const a = await postChat(t.url, { model: 'comments-after-chunk', stream: true }, { signal: AbortSignal.timeout(5000) });
    expect(a.status).toBe(200);
    expect(JSON.parse(a.events[0]).choices[0].delta.content).toBe('Hel');
    const error = JSON.parse(a.events.at(-2)!);
    expect(envelopeProblem(error)).toBeUndefined();
    expect(error.error.code).toBe('timeout');
    expect(a.events.at(-1)).toBe('[DONE]');
  });

  it('comments only, before any chunk → 504 timeout', async () => {
    const a = await postChat(t.url, { model: 'comments-only', stream: true }, { signal: AbortSignal.timeout(5000) });
    expectEnvelope(a, 504, 'timeout');
  });

  it('comments only on the first target → the next target answers', async () => {
    const a = await postChat(t.url, { model: 'comments-then-good', stream: true }, { signal: AbortSignal.timeout(5000) });
    expect(a.status, a.text.slice(0, 300)).toBe(200);
    expect(a.headers['x-switchyard-attempts']).toBe('2');
    expect(a.events.at(-1)).toBe('[DONE]');
  });

  it('a client that leaves mid-stream is logged with status 499', async () => {
    const leave = new AbortController();
    const res = await fetch(`${t.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${CLIENT_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'slow-words', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
      signal: leave.signal,
    });
    const reqId = res.headers.get('x-request-id')!;
    const reader = res.body!.getReader();
    await reader.read();
    leave.abort();
    await reader.cancel().catch(() => undefined);
    const line = await logLineFor(t, reqId, 5000);
    expect(line.status).toBe(499);
  });

  it('an upstream that never answers → 504 within firstByteMs (closed within 5 s)', async () => {
    const a = await postChat(t.url, { model: 'hang' }, { signal: AbortSignal.timeout(5000) });
    expectEnvelope(a, 504, 'timeout');
  });
});

describe('server.upstreamBodyLimit', () => {
  const LIMIT = 1024 * 1024;
  let small: ScriptedUpstream;
  let g: TestGateway;
  beforeAll(async () => {
    // ~40 MB of valid chat.completion JSON, built once before anything is measured.
    const HUGE = Buffer.from(JSON.stringify(completion('a'.repeat(40 * 1024 * 1024))));
    const NEAR = Buffer.from(JSON.stringify(completion('b'.repeat(LIMIT - 4096))));
    small = await startScriptedUpstream({
      huge: (x) => json(x, 200, HUGE),
      near: (x) => json(x, 200, NEAR),
    });
    g = await startTestGateway({
      server: { upstreamBodyLimit: '1mb' },
      keys: [{ name: 'client', key: CLIENT_KEY, models: ['*'] }],
      providers: { up: { plugin: 'openai', baseUrl: `${small.url}/v1`, apiKey: UPSTREAM_SECRET } },
      models: { huge: { ...FAST, targets: [{ provider: 'up', model: 'huge' }] }, near: { ...FAST, targets: [{ provider: 'up', model: 'near' }] } },
    });
  });
  afterAll(async () => {
    await g?.close();
    await small?.close();
  });

  it('a 40 MB answer over a 1 MB limit → 502 saying it is too large, without holding it in memory', async () => {
    const before = process.memoryUsage().rss;
    let peak = before;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 5);
    let a: ClientAnswer;
    try {
      a = await postChat(g.url, { model: 'huge' });
    } finally {
      clearInterval(sampler);
    }
    expectEnvelope(a, 502, 'upstream_error');
    expect(a.json.error.message).toMatch(/too large|larger than|exceeds/i);
    // Reading the body whole would take 40 MB as chunks plus as much again as a string; allow
    // noise of the order of a few limits, far below that.
    expect(peak - before).toBeLessThan(20 * LIMIT);
  });

  it('an answer just under the limit is served', async () => {
    const a = await postChat(g.url, { model: 'near' });
    expect(a.status, a.text.slice(0, 300)).toBe(200);
    expect(a.json.choices[0].message.content).toHaveLength(LIMIT - 4096);
  });
});
