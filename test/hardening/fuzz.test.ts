/**
 * A seeded fuzzer over what clients get wrong: mutated chat requests (wrong types, extreme
 * numbers, odd unicode, deep nesting, prototype-pollution keys, unknown fields, broken JSON,
 * wrong content types, empty bodies) and odd headers (Authorization, Content-Type parameters,
 * repeated headers), sent over keep-alive connections to the real gateway with the mock
 * provider. Every answer must be a valid completion or an OpenAI error envelope with an
 * x-request-id, never a 5xx, and the gateway must stay up and unpolluted.
 *
 * FUZZ_CASES raises the case count (default 2000); FUZZ_SEED picks another sequence. A failure
 * names the case number and the mutations that built it, so it can be replayed with the seed.
 */
import { Pool } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEV_KEY, expectValid, mulberry32, startTestGateway, type TestGateway } from '../../src/kit/testing/index.ts';
import { deepJsonText, envelopeProblem, mapLimit, nestedArrays, nestedObjects, tryJson } from './helpers.ts';

const CASES = Number(process.env.FUZZ_CASES ?? 2000);
const SEED = Number(process.env.FUZZ_SEED ?? 0x5eed);
const CONCURRENCY = 8;
const ANSWER_MS = 5000;
/** Deeper than the 64 levels the gateway accepts. */
const TOO_DEEP = 65;

const CONFIG = `
server: { bodyLimit: 1mb }
keys:
  - { name: dev, key: ${DEV_KEY}, models: ["*"] }
  - { name: narrow, key: sk-test-narrow-0123456789, models: ["other"] }
providers:
  mock: { plugin: mock }
models:
  demo: { targets: [{ provider: mock, model: mock-1 }] }
  other: { targets: [{ provider: mock, model: mock-2 }] }
`;

let t: TestGateway;
let pool: Pool;
beforeAll(async () => {
  t = await startTestGateway(CONFIG);
  pool = new Pool(t.url, { connections: CONCURRENCY, pipelining: 1 });
});
afterAll(async () => {
  await pool?.close();
  await t?.close();
});

interface FuzzCase {
  label: string;
  method: string;
  path: string;
  /** Flat name, value list, so a header can repeat. */
  headers: string[];
  body?: string | Buffer;
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

async function send(c: FuzzCase): Promise<Answer> {
  // A gateway that never answers is a failure of its own, not a stuck test.
  const res = await pool.request({ method: c.method as 'POST', path: c.path, headers: c.headers, body: c.body, headersTimeout: ANSWER_MS, bodyTimeout: ANSWER_MS });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, text };
}

const header = (a: Answer, name: string): string | undefined => {
  const v = a.headers[name];
  return Array.isArray(v) ? v[0] : v;
};

/** What is wrong with an answer to a client mistake (or to a valid request), or undefined. */
function answerProblem(c: FuzzCase, a: Answer): string | undefined {
  if (a.status >= 500) return `status ${a.status}`;
  if (!header(a, 'x-request-id')) return `status ${a.status} without x-request-id`;
  const type = header(a, 'content-type') ?? '';
  if (a.status === 200 && type.startsWith('text/event-stream')) return streamProblem(a.text);
  const body = tryJson(a.text);
  if (body === undefined) return `status ${a.status}, body is not JSON (${type})`;
  if (a.status === 200) {
    if (c.path.includes('healthz')) return undefined;
    try {
      expectValid('CreateChatCompletionResponse', body);
    } catch (err) {
      return `200 but not a valid completion: ${(err as Error).message.slice(0, 300)}`;
    }
    return undefined;
  }
  if (a.status < 400) return `unexpected status ${a.status}`;
  return envelopeProblem(body);
}

function streamProblem(text: string): string | undefined {
  const events = text.split('\n\n').filter((e) => e.trim());
  if (events.at(-1) !== 'data: [DONE]') return 'stream does not end with data: [DONE]';
  for (const event of events.slice(0, -1)) {
    if (!event.startsWith('data: ')) return `stream event is not data: ${event.slice(0, 80)}`;
    const data = tryJson(event.slice(6));
    if (data && typeof data === 'object' && 'error' in data) {
      const p = envelopeProblem(data);
      if (p) return `in-stream error: ${p}`;
      continue;
    }
    try {
      expectValid('CreateChatCompletionStreamResponse', data);
    } catch (err) {
      return `invalid chunk: ${(err as Error).message.slice(0, 300)}`;
    }
  }
  return undefined;
}

/** What the gateway logged about its own failure on a request (the cause of a 500), briefly. */
function gatewayErrorFor(reqId: string | undefined): string {
  const line = t.logs.find((l) => l.reqId === reqId && l.level >= 50);
  return line ? `${line.msg}: ${String(line.err?.message ?? '').slice(0, 200)}` : 'none';
}

// ---------------------------------------------------------------- the generator

type Rand = () => number;
const pick = <T>(r: Rand, items: readonly T[]): T => items[Math.floor(r() * items.length)];
const int = (r: Rand, lo: number, hi: number) => lo + Math.floor(r() * (hi - lo + 1));

const BASES: Array<Record<string, unknown>> = [
  { model: 'demo', messages: [{ role: 'user', content: 'hi' }] },
  { model: 'demo', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'hi' }] },
  {
    model: 'demo',
    messages: [
      { role: 'system', content: 'be brief' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'what is this?' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
        ],
      },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'look', arguments: '{"q":"x"}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: 'a cat' },
    ],
    tools: [{ type: 'function', function: { name: 'look', description: 'looks', parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] } } }],
    tool_choice: 'auto',
  },
  {
    model: 'demo',
    messages: [{ role: 'user', content: 'json please' }],
    response_format: { type: 'json_schema', json_schema: { name: 'thing', schema: { type: 'object', properties: { a: { type: 'number' } } } } },
    temperature: 0.5,
    top_p: 0.9,
    max_tokens: 50,
    n: 1,
    stop: ['\n'],
    seed: 7,
    metadata: { team: 'a' },
    user: 'u-1',
    logit_bias: { '50256': -100 },
  },
];

const STRANGE_STRINGS = [
  '',
  ' ',
  '\u0000',
  'nul\u0000inside',
  '\ud800',
  '\udfff\ud800',
  '😀'.repeat(50),
  'e\u0301\u0301\u0301',
  '\u202eRTL override',
  '\u200b\u200c\u200d\ufeff',
  '%s%n%x',
  '${jndi:ldap://127.0.0.1/x}',
  '<script>alert(1)</script>',
  '\r\nX-Injected: yes\r\n',
  'a'.repeat(20_000),
  'demo\u0000',
  'DEMO',
  '*',
  '../../etc/passwd',
  'constructor',
  '__proto__',
  'toString',
  'hasOwnProperty',
];

const STRANGE_NUMBERS = [0, -0, -1, 1, 2, 3, 0.5, -1e-300, 1e308, -1e308, 2 ** 53 + 1, -(2 ** 63), 2 ** 64, 1e21, 4294967296, 128, 129, 100000];

function strangeValue(r: Rand): { value: unknown; what: string } {
  switch (int(r, 0, 12)) {
    case 0:
      return { value: null, what: 'null' };
    case 1:
      return { value: r() < 0.5, what: 'boolean' };
    case 2: {
      const n = pick(r, STRANGE_NUMBERS);
      return { value: n, what: `number ${n}` };
    }
    case 3:
    case 4: {
      const s = pick(r, STRANGE_STRINGS);
      return { value: s, what: `string(${s.length})` };
    }
    case 5:
      return { value: [], what: '[]' };
    case 6:
      return { value: {}, what: '{}' };
    case 7: {
      const d = int(r, 2, 200);
      return { value: nestedArrays(d), what: `arrays nested ${d}` };
    }
    case 8: {
      const d = int(r, 2, 200);
      return { value: nestedObjects(d, pick(r, ['a', 'properties', 'items', '__proto__'])), what: `objects nested ${d}` };
    }
    case 9: {
      const n = int(r, 1, 3000);
      return { value: Array.from({ length: n }, (_, i) => i), what: `array of ${n}` };
    }
    case 10:
      return { value: { role: 'user', content: 'hi' }, what: 'a message object' };
    case 11: {
      const s = randomText(r, int(r, 1, 64));
      return { value: s, what: `random text(${s.length})` };
    }
    default:
      return { value: [{ type: 'text', text: 'x' }], what: 'content parts' };
  }
}

/** Code points from every plane, control characters and lone surrogates included. */
function randomText(r: Rand, length: number): string {
  let out = '';
  const ranges: Array<[number, number]> = [
    [0, 0x7f],
    [0x80, 0x7ff],
    [0x800, 0xd7ff],
    [0xd800, 0xdfff],
    [0xe000, 0xffff],
    [0x10000, 0x10ffff],
  ];
  for (let i = 0; i < length; i++) {
    const [lo, hi] = pick(r, ranges);
    out += String.fromCodePoint(int(r, lo, hi));
  }
  return out;
}

type Path = Array<string | number>;

function paths(value: unknown, at: Path = [], out: Path[] = []): Path[] {
  if (!value || typeof value !== 'object') return out;
  const entries: Array<[string | number, unknown]> = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
  for (const [key, child] of entries) {
    out.push([...at, key]);
    paths(child, [...at, key], out);
  }
  return out;
}

function parentOf(root: unknown, path: Path): Record<string | number, unknown> {
  let node = root as Record<string | number, unknown>;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
  return node;
}

const formatPath = (p: Path) =>
  p
    .map((k) => (typeof k === 'number' ? `[${k}]` : `.${k}`))
    .join('')
    .replace(/^\./, '');

const UNKNOWN_KEYS = ['x_extra', 'MODEL', 'model ', '', '🙂', 'constructor', 'prototype', 'toString', '__defineGetter__', '$ref', 'a.b', 'stream_options', 'functions', 'provider', 'api_key'];
const POLLUTERS = [
  '"__proto__":{"polluted":"fuzz"}',
  '"constructor":{"prototype":{"polluted":"fuzz"}}',
  '"__proto__":{"__proto__":{"polluted":"fuzz"}}',
  '"__proto__":null',
  '"__proto__":[{"polluted":"fuzz"}]',
];

/** Mutates a copy of a base request in one to three ways; returns its JSON text and what was done. */
function mutateJson(r: Rand): { text: string; steps: string[] } {
  const body = structuredClone(pick(r, BASES));
  const steps: string[] = [];
  for (let n = int(r, 1, 3); n > 0; n--) {
    const all = paths(body);
    if (all.length === 0) {
      steps.push('(nothing left to mutate)');
      break;
    }
    const path = pick(r, all);
    const parent = parentOf(body, path);
    const key = path.at(-1)!;
    switch (int(r, 0, 4)) {
      case 0:
      case 1: {
        const { value, what } = strangeValue(r);
        parent[key] = value;
        steps.push(`${formatPath(path)} = ${what}`);
        break;
      }
      case 2:
        if (Array.isArray(parent)) parent.splice(key as number, 1);
        else delete parent[key];
        steps.push(`delete ${formatPath(path)}`);
        break;
      case 3: {
        const target = r() < 0.5 ? body : parent;
        if (Array.isArray(target)) {
          target.push(strangeValue(r).value);
          steps.push(`push onto ${formatPath(path.slice(0, -1))}`);
        } else {
          const name = r() < 0.7 ? pick(r, UNKNOWN_KEYS) : randomText(r, int(r, 1, 8));
          const { value, what } = strangeValue(r);
          (target as Record<string, unknown>)[name] = value;
          steps.push(`add ${JSON.stringify(name)} = ${what}${target === body ? ' at top level' : ` beside ${formatPath(path)}`}`);
        }
        break;
      }
      default: {
        const { value, what } = strangeValue(r);
        const field = pick(r, ['model', 'messages', 'stream', 'n', 'max_tokens', 'temperature', 'tools', 'tool_choice', 'stream_options', 'response_format', 'metadata']);
        body[field] = value;
        steps.push(`${field} = ${what}`);
      }
    }
  }
  let text = JSON.stringify(body);
  if (r() < 0.12) {
    // Prototype-pollution keys cannot be set through a plain object, so they go in as text.
    const polluter = pick(r, POLLUTERS);
    const openings = [...text.matchAll(/\{/g)].map((m) => m.index!);
    const at = pick(r, openings);
    const empty = text[at + 1] === '}';
    text = `${text.slice(0, at + 1)}${polluter}${empty ? '' : ','}${text.slice(at + 1)}`;
    steps.push(`insert ${polluter} at byte ${at}`);
  }
  return { text, steps };
}

/** Breaks JSON text the way a buggy client or a proxy might. */
function breakText(r: Rand, text: string): { body: string | Buffer; step: string } {
  switch (int(r, 0, 13)) {
    case 0: {
      const at = int(r, 0, text.length - 1);
      return { body: text.slice(0, at), step: `truncated at ${at}` };
    }
    case 1:
      return { body: '', step: 'empty body' };
    case 2:
      return { body: pick(r, [' ', '\n', 'null', '[]', '"str"', '0', 'true', '{}', '[{}]', '{"model":"demo"}', '{"messages":[]}']), step: 'a JSON value that is no request' };
    case 3:
      return { body: `\ufeff${text}`, step: 'BOM prefix' };
    case 4:
      return { body: text.replace(/}$/, ',}'), step: 'trailing comma' };
    case 5:
      return { body: text.replaceAll('"', "'"), step: 'single quotes' };
    case 6:
      return { body: text.replace('{', '{"model":"demo","model":123,'), step: 'duplicate key' };
    case 7:
      return { body: text.replace(/\d+(\.\d+)?/, pick(r, ['NaN', 'Infinity', '-Infinity', '1e999999', '9'.repeat(5000), '0x10', '01', '.5', '-'])), step: 'bad number literal' };
    case 8: {
      const bytes = Buffer.from(text);
      const at = int(r, 0, bytes.length - 1);
      return { body: Buffer.concat([bytes.subarray(0, at), Buffer.from([pick(r, [0xff, 0xfe, 0xc0, 0x80, 0xed, 0x00])]), bytes.subarray(at)]), step: `invalid UTF-8 byte at ${at}` };
    }
    case 9:
      return { body: Buffer.from(text, 'utf16le'), step: 'UTF-16 body' };
    case 10:
      return { body: `${text}${pick(r, ['garbage', '}', ']', '{}', '\u0000', '\n{"model":"demo"}'])}`, step: 'trailing bytes' };
    case 11:
      return { body: `/* c */${text}`, step: 'comment' };
    case 12: {
      const d = int(r, TOO_DEEP, 100_000);
      return { body: text.replace(/}$/, `,"x_deep":${deepJsonText(d)}}`), step: `x_deep nested ${d}` };
    }
    default:
      return { body: `{"model":"demo","messages":[{"role":"user","content":"${'\\'.repeat(int(r, 1, 3))}`, step: 'unterminated escape' };
  }
}

const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'application/json; charset=UTF-8',
  'application/json;charset=utf-8',
  'APPLICATION/JSON',
  'application/json; charset=latin1',
  'application/json; charset=utf-16',
  'application/json; charset="utf-8"',
  'application/json;;;',
  'application/json; boundary=x; q=1; =;',
  'application/json ; charset = utf-8',
  'application/vnd.api+json',
  'application/jsonx',
  'text/json',
  'text/plain',
  'text/plain; charset=utf-8',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=zzz',
  'application/octet-stream',
  '*/*',
  'application/json, text/plain',
  'json',
  '',
];

const AUTHS = (): string[][] => [
  ['authorization', `Bearer ${DEV_KEY}`],
  ['authorization', `Bearer ${DEV_KEY}`],
  ['authorization', `bearer ${DEV_KEY}`],
  ['authorization', `BEARER ${DEV_KEY}`],
  ['authorization', `Bearer  ${DEV_KEY}`],
  ['authorization', `Bearer ${DEV_KEY} `],
  ['authorization', `Bearer ${DEV_KEY} extra`],
  ['authorization', `Bearer ${DEV_KEY},Bearer ${DEV_KEY}`],
  ['authorization', `Bearer ${DEV_KEY}`, 'authorization', 'Bearer sk-wrong'],
  ['authorization', 'Bearer sk-wrong', 'authorization', `Bearer ${DEV_KEY}`],
  ['authorization', 'Bearer sk-test-narrow-0123456789'],
  ['authorization', 'Bearer'],
  ['authorization', 'Bearer '],
  ['authorization', ''],
  ['authorization', `Basic ${Buffer.from(`user:${DEV_KEY}`).toString('base64')}`],
  ['authorization', `Token ${DEV_KEY}`],
  ['authorization', `Bearer ${'x'.repeat(8000)}`],
  ['authorization', `Bearer ${DEV_KEY.slice(0, -1)}`],
  ['authorization', `Bearer ${DEV_KEY}\u00e9`],
  ['authorization', 'Bearer __proto__'],
  ['authorization', 'Bearer constructor'],
  ['x-api-key', DEV_KEY],
  [],
];

const PATHS = [
  '/v1/chat/completions',
  '/v1/chat/completions',
  '/v1/chat/completions',
  '/chat/completions',
  '/v1/chat/completions/',
  '/v1/chat/completions?x=1',
  '/v1/chat/completions?__proto__[polluted]=fuzz&constructor[prototype][polluted]=fuzz',
  '/v1//chat/completions',
  '/V1/chat/completions',
  '/v1/chat/completions%00',
  '/v1/chat/completions/..%2f..%2fhealthz',
];

function makeCase(r: Rand, index: number): FuzzCase {
  const steps: string[] = [];
  let text: string;
  if (r() < 0.25) {
    // A valid base request, only the headers or the framing are odd.
    text = JSON.stringify(pick(r, BASES));
    steps.push('valid body');
  } else {
    const m = mutateJson(r);
    text = m.text;
    steps.push(...m.steps);
  }
  let body: string | Buffer = text;
  if (r() < 0.25) {
    const b = breakText(r, text);
    body = b.body;
    steps.push(b.step);
  }
  const headers: string[] = [];
  const auth = r() < 0.6 ? ['authorization', `Bearer ${DEV_KEY}`] : pick(r, AUTHS());
  headers.push(...auth);
  if (auth.length) steps.push(`auth ${JSON.stringify(auth.filter((_, i) => i % 2).map((v) => v.slice(0, 40)))}`);
  if (r() < 0.7) headers.push('content-type', 'application/json');
  else if (r() < 0.85) {
    const type = pick(r, CONTENT_TYPES);
    headers.push('content-type', type);
    steps.push(`content-type ${JSON.stringify(type)}`);
  } else if (r() < 0.5) {
    headers.push('content-type', 'application/json', 'content-type', pick(r, CONTENT_TYPES));
    steps.push('content-type twice');
  } else steps.push('no content-type');
  if (r() < 0.1) {
    const extra = pick(r, [
      ['content-encoding', 'gzip'],
      ['content-encoding', 'br'],
      ['content-encoding', 'identity'],
      ['content-encoding', 'x-unknown'],
      ['x-request-id', 'a', 'x-request-id', 'b'],
      ['x-request-id', 'x'.repeat(2000)],
      ['x-request-id', '__proto__'],
      ['accept', 'text/event-stream'],
      ['accept', 'application/xml'],
      ['x-forwarded-for', '127.0.0.1, ::1, garbage'],
    ]);
    headers.push(...extra);
    steps.push(`header ${extra.join(': ').slice(0, 60)}`);
  }
  let method = 'POST';
  let path = '/v1/chat/completions';
  if (r() < 0.08) {
    path = pick(r, PATHS);
    steps.push(`path ${path}`);
  }
  if (r() < 0.04) {
    method = pick(r, ['GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']);
    steps.push(`method ${method}`);
  }
  return { label: `#${index} ${steps.join('; ')}`, method, path, headers, body: method === 'GET' ? undefined : body };
}

// ---------------------------------------------------------------- the tests

describe('fuzzing client mistakes', () => {
  it(`answers ${CASES} mutated requests (seed ${SEED}) with a completion or an OpenAI error, never a 5xx`, async () => {
    const r = mulberry32(SEED);
    const cases = Array.from({ length: CASES }, (_, i) => makeCase(r, i));
    const failures: string[] = [];
    const tally: Record<number, number> = {};
    await mapLimit(cases, CONCURRENCY, async (c) => {
      let answer: Answer;
      try {
        answer = await send(c);
      } catch (err) {
        failures.push(`${c.label}: no answer (${(err as Error).message})`);
        return;
      }
      tally[answer.status] = (tally[answer.status] ?? 0) + 1;
      const problem = answerProblem(c, answer);
      if (problem) failures.push(`${c.label}: ${problem} — ${answer.text.slice(0, 200)}${answer.status >= 500 ? ` — log: ${gatewayErrorFor(header(answer, 'x-request-id'))}` : ''}`);
    });
    const health = await fetch(`${t.url}/healthz`);
    expect(health.status).toBe(200);
    expect(failures.slice(0, 15), `${failures.length} of ${CASES} cases failed; statuses ${JSON.stringify(tally)}`).toEqual([]);
    // The fuzzer is worth something only if it reaches the pipeline as well as the parsers.
    expect(tally[200] ?? 0).toBeGreaterThan(CASES * 0.05);
    expect(Object.keys(tally).filter((s) => s.startsWith('4')).length).toBeGreaterThan(3);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(t.logs.filter((l) => l.level >= 50).map((l) => l.msg)).toEqual([]);
  }, 120_000);

  it('prototype-pollution keys anywhere leave Object.prototype alone and the gateway answering', async () => {
    const bodies = [
      '{"__proto__":{"polluted":"yes"},"model":"demo","messages":[{"role":"user","content":"hi"}]}',
      '{"constructor":{"prototype":{"polluted":"yes"}},"model":"demo","messages":[{"role":"user","content":"hi"}]}',
      '{"model":"demo","messages":[{"role":"user","content":"hi","__proto__":{"polluted":"yes"}}]}',
      '{"model":"demo","messages":[{"role":"user","content":"hi"}],"metadata":{"__proto__":{"polluted":"yes"}}}',
      '{"model":"demo","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{"__proto__":{"polluted":"yes"}}}}}],"tool_choice":"required"}',
      '{"model":"demo","messages":[{"role":"user","content":"hi"}],"stream":true,"stream_options":{"constructor":{"prototype":{"polluted":"yes"}}}}',
      '{"model":"__proto__","messages":[{"role":"user","content":"hi"}]}',
      '{"model":"constructor","messages":[{"role":"user","content":"hi"}]}',
      '{"model":"hasOwnProperty","messages":[{"role":"user","content":"hi"}]}',
    ];
    for (const body of bodies) {
      const a = await send({ label: body, method: 'POST', path: '/v1/chat/completions', headers: ['authorization', `Bearer ${DEV_KEY}`, 'content-type', 'application/json'], body });
      expect(answerProblem({ label: body, method: 'POST', path: '/v1/chat/completions', headers: [], body }, a), body).toBeUndefined();
      expect(a.status, body).toBeLessThan(500);
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('polluted');
    const ok = await t.client().chat.completions.create({ model: 'demo', messages: [{ role: 'user', content: 'still there?' }] });
    expectValid('CreateChatCompletionResponse', ok);
    expect(ok).not.toHaveProperty('polluted');
  });
});

describe('what the fuzzer found, kept as plain cases', () => {
  it('a tool that is not a function (OpenAI custom tools, a content part by mistake) is a 4xx, not a crash of the mock', async () => {
    for (const tools of [[{ type: 'custom', custom: { name: 'grep' } }], [{ type: 'text', text: 'x' }]]) {
      const body = JSON.stringify({ model: 'demo', messages: [{ role: 'user', content: 'hi' }], tools });
      const a = await send({ label: body, method: 'POST', path: '/v1/chat/completions', headers: ['authorization', `Bearer ${DEV_KEY}`, 'content-type', 'application/json'], body });
      expect(answerProblem({ label: body, method: 'POST', path: '/v1/chat/completions', headers: [], body }, a), `${body} → ${a.text}`).toBeUndefined();
    }
  });
});

describe('JSON nested deeper than 64 levels', () => {
  /** Log lines before this suite belong to other tests. */
  let mark = 0;
  beforeAll(() => {
    mark = t.logs.length;
  });
  const base = { model: 'demo', messages: [{ role: 'user', content: 'hi' }] };
  /** The request with `field` (a raw JSON text) spliced in, for depths JSON.stringify cannot write. */
  const withField = (field: string, json: string) => `${JSON.stringify(base).slice(0, -1)},${JSON.stringify(field)}:${json}}`;
  const post = (body: string) => send({ label: '', method: 'POST', path: '/v1/chat/completions', headers: ['authorization', `Bearer ${DEV_KEY}`, 'content-type', 'application/json'], body });

  const cases: Array<{ name: string; body: () => string; param: string }> = [
    { name: 'an unknown top-level field, arrays', body: () => withField('x_extra', deepJsonText(TOO_DEEP + 5)), param: 'x_extra' },
    { name: 'an unknown top-level field, 100 000 arrays', body: () => withField('x_extra', deepJsonText(100_000)), param: 'x_extra' },
    { name: 'metadata, objects', body: () => withField('metadata', deepJsonText(TOO_DEEP + 5, '{"k":', '}', '"v"')), param: 'metadata' },
    {
      name: 'tools[0].function.parameters',
      body: () => withField('tools', `[{"type":"function","function":{"name":"f","parameters":${deepJsonText(200, '{"type":"object","properties":{"a":', '}}', '{"type":"string"}')}}}]`),
      param: 'tools[0].function.parameters',
    },
    { name: 'a message content', body: () => JSON.stringify({ model: 'demo', messages: [{ role: 'user', content: nestedArrays(TOO_DEEP + 1, 'x') }] }), param: 'messages[0].content' },
    {
      name: 'response_format.json_schema.schema',
      body: () => withField('response_format', `{"type":"json_schema","json_schema":{"name":"n","schema":${deepJsonText(TOO_DEEP + 2, '{"items":', '}', '{}')}}}`),
      param: 'response_format',
    },
  ];

  for (const c of cases) {
    it(`${c.name} → 400 invalid_request naming where, not a 5xx`, async () => {
      const a = await post(c.body());
      const body = tryJson(a.text) as { error: { code: string; param: string | null } };
      expect(a.status, a.text.slice(0, 300)).toBe(400);
      expect(envelopeProblem(body)).toBeUndefined();
      expect(body.error.code).toBe('invalid_request');
      expect(body.error.param ?? '').toMatch(new RegExp(`^${c.param.replace(/[[\].]/g, '\\$&')}`));
      expect(header(a, 'x-request-id')).toBeTruthy();
    });
  }

  it('a moderately nested unknown field (30 levels) is no reason to refuse', async () => {
    const a = await post(withField('x_extra', deepJsonText(30)));
    expect(a.status, a.text.slice(0, 300)).toBe(200);
  });

  it('the gateway still answers after the deep bodies, and logged no failure of its own', async () => {
    expect((await fetch(`${t.url}/healthz`)).status).toBe(200);
    expect(
      t.logs
        .slice(mark)
        .filter((l) => l.level >= 50)
        .map((l) => l.msg),
    ).toEqual([]);
  });
});
