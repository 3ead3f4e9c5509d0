/**
 * The secrets audit: a mixed, scripted run (upstreams echoing the provider key they received,
 * clients putting their own key where it does not belong, health and model listings), then every
 * response body and header the clients got and the whole log of the run are searched for every
 * configured secret (provider keys, one of them set through ${ENV} interpolation, and client keys)
 * in every form a leak could take: raw, base64, base64url, URL-encoded, any 12-character
 * fragment. The finder is tested first, so "nothing found" means something.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../src/kit/testing/index.ts';
import {
  type Behaviour,
  CLIENT_KEY,
  chunk,
  completion,
  deepJsonText,
  echoForms,
  findSecrets,
  type Leak,
  ODD_SECRET,
  rawExchange,
  type ScriptedUpstream,
  secretForms,
  startScriptedUpstream,
  UPSTREAM_SECRET,
} from './helpers.ts';

/** A provider key that only the environment holds (apiKey: "${AUDIT_ENV_KEY}"). */
const ENV_SECRET = 'sk-env-INTERP-55aa66bb77cc88dd';
/** A second client's key: one client must never see another's. */
const OTHER_CLIENT_KEY = 'sk-other-CLIENT-aa11bb22cc33dd44';
const SECRETS: Record<string, string> = {
  'providers.up.apiKey': UPSTREAM_SECRET,
  'providers.odd.apiKey': ODD_SECRET,
  'providers.envy.apiKey (${AUDIT_ENV_KEY})': ENV_SECRET,
  'keys.client': CLIENT_KEY,
  'keys.other': OTHER_CLIENT_KEY,
};

describe('the secret finder', () => {
  it('finds a planted base64 copy, and every other form, of each secret', () => {
    for (const [label, secret] of Object.entries(SECRETS)) {
      const planted = findSecrets([{ where: 'planted', text: `{"msg":"x","err":"${Buffer.from(secret).toString('base64')}"}` }], SECRETS);
      expect(planted.map((l) => [l.secret, l.encoding])).toContainEqual([label, 'base64']);
      for (const form of secretForms(secret)) {
        const found = findSecrets([{ where: 'planted', text: `a ${form.text} b` }], { [label]: secret });
        expect(found.length, `${label} ${form.encoding}`).toBeGreaterThan(0);
      }
    }
  });

  it('finds the forms an echoing upstream sends, a truncated copy included', () => {
    for (const text of Object.values(echoForms(UPSTREAM_SECRET))) expect(findSecrets([{ where: 'x', text }], SECRETS).length).toBeGreaterThan(0);
    expect(findSecrets([{ where: 'x', text: UPSTREAM_SECRET.slice(7, 19) }], SECRETS).map((l) => l.encoding)).toEqual(['fragment[7..19]']);
  });

  it('keeps the URL-encoded form distinct when encoding changes it, and finds nothing in clean text', () => {
    expect(secretForms(ODD_SECRET).find((f) => f.encoding === 'url-encoded')?.text).toBe(encodeURIComponent(ODD_SECRET));
    expect(encodeURIComponent(ODD_SECRET)).not.toBe(ODD_SECRET);
    expect(findSecrets([{ where: 'x', text: `[REDACTED] ${'0123456789'} req_${'ab'.repeat(16)} sk-upstream` }], SECRETS)).toEqual([]);
  });
});

// ---------------------------------------------------------------- the run

const echoAll = (s: string) => {
  const f = echoForms(s);
  return `key ${f.raw} / ${f.base64} / ${f.base64url} / ${f.urlencoded} / …${f.fragment}…`;
};
const errorOf = (bearer: string) => ({ error: { message: `Incorrect API key: ${echoAll(bearer)}`, type: 'invalid_request_error', param: bearer, code: echoForms(bearer).fragment } });
const send = (x: Parameters<Behaviour>[0], status: number, body: unknown, type = 'application/json') =>
  x.res.writeHead(status, { 'content-type': type }).end(typeof body === 'string' ? body : JSON.stringify(body));

const ECHO_STATUSES = [400, 401, 403, 404, 409, 422, 429, 500, 502, 503];
const behaviours: Record<string, Behaviour> = {
  good: (x) => send(x, 200, completion('fine')),
  /** A 400 quoting the whole request body, with whatever the client put in it. */
  'echo-body': (x) => send(x, 400, { error: { message: `Bad request body: ${JSON.stringify(x.body)}`, type: 'invalid_request_error', param: 'messages', code: null } }),
  /** Echoes the key in a response header and a 500 body that is not JSON. */
  'echo-text': (x) => x.res.writeHead(500, { 'content-type': 'text/plain', 'x-upstream-debug': echoAll(x.bearer) }).end(`internal error for ${echoAll(x.bearer)}`),
  'ok-but-error': (x) => send(x, 200, errorOf(x.bearer)),
  'sse-first': (x) => send(x, 200, `data: ${JSON.stringify(errorOf(x.bearer))}\n\n`, 'text/event-stream'),
  'sse-after-chunk': (x) => send(x, 200, `${chunk('Hel')}data: ${JSON.stringify(errorOf(x.bearer))}\n\n`, 'text/event-stream'),
};
for (const status of ECHO_STATUSES) behaviours[`echo-${status}`] = (x) => send(x, status, errorOf(x.bearer));

let upstream: ScriptedUpstream;
let t: TestGateway;
beforeAll(async () => {
  upstream = await startScriptedUpstream(behaviours);
  const models: Record<string, unknown> = { demo: { targets: [{ provider: 'mock', model: 'mock-1' }] } };
  for (const provider of ['up', 'odd', 'envy']) {
    for (const name of Object.keys(behaviours)) models[`${provider}-${name}`] = { retry: { attempts: 1 }, targets: [{ provider, model: name }] };
  }
  // A fallback chain: every target's failure ends up in attemptLog.
  models.chain = { retry: { attempts: 1 }, targets: ['up', 'odd', 'envy'].map((provider) => ({ provider, model: 'echo-500' })) };
  t = await startTestGateway(
    {
      keys: [
        { name: 'client', key: CLIENT_KEY, models: ['*'] },
        { name: 'other', key: OTHER_CLIENT_KEY, models: ['demo'] },
      ],
      providers: {
        mock: { plugin: 'mock' },
        up: { plugin: 'openai', baseUrl: `${upstream.url}/v1`, apiKey: UPSTREAM_SECRET },
        odd: { plugin: 'openai', baseUrl: `${upstream.url}/v1`, apiKey: ODD_SECRET },
        envy: { plugin: 'openai', baseUrl: `${upstream.url}/v1`, apiKey: '${AUDIT_ENV_KEY}' },
      },
      models,
    },
    { env: { AUDIT_ENV_KEY: ENV_SECRET } },
  );
});
afterAll(async () => {
  await t?.close();
  await upstream?.close();
});

interface Step {
  name: string;
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  /** JSON-encoded unless a string. */
  body?: unknown;
}

const auth = (key = CLIENT_KEY) => ({ authorization: `Bearer ${key}` });
const chat = (name: string, body: unknown, headers: Record<string, string> = auth()): Step => ({
  name,
  method: 'POST',
  path: '/v1/chat/completions',
  headers: { 'content-type': 'application/json', ...headers },
  body,
});
const ask = (model: string, extra: Record<string, unknown> = {}) => ({ model, messages: [{ role: 'user', content: 'hi' }], ...extra });
const f = echoForms(CLIENT_KEY);

function script(): Step[] {
  const steps: Step[] = [];
  // Upstreams echoing the provider key, every status, plain and streamed, for each provider.
  for (const provider of ['up', 'odd', 'envy']) {
    for (const name of Object.keys(behaviours)) {
      steps.push(chat(`${provider}-${name}`, ask(`${provider}-${name}`)));
      steps.push(chat(`${provider}-${name} (stream)`, ask(`${provider}-${name}`, { stream: true })));
    }
  }
  steps.push(chat('fallback chain of echoes', ask('chain')), chat('fallback chain of echoes (stream)', ask('chain', { stream: true })));
  // The client's own key where it does not belong.
  const keyEverywhere = `my key ${f.raw} b64 ${f.base64} b64url ${f.base64url} url ${f.urlencoded}`;
  steps.push(
    chat('client key in the content, echoed by the upstream', ask('up-echo-body', { messages: [{ role: 'user', content: keyEverywhere }], user: CLIENT_KEY, api_key: CLIENT_KEY })),
    chat('client key in the content, echoed in a stream error', { ...ask('up-sse-after-chunk', { stream: true }), messages: [{ role: 'user', content: keyEverywhere }] }),
    chat('client key as the model', ask(CLIENT_KEY)),
    chat('client key as the model (stream)', ask(CLIENT_KEY, { stream: true })),
    chat('base64 client key as the model', ask(f.base64)),
    chat('client key as a role', { model: 'demo', messages: [{ role: CLIENT_KEY, content: 'x' }] }),
    chat('client key as a response_format type', ask('demo', { response_format: { type: CLIENT_KEY } })),
    chat('client key as a number field', ask('demo', { temperature: CLIENT_KEY, max_tokens: f.base64 })),
    chat('client key as a field name, nested too deep', ask('demo', { x: { [CLIENT_KEY]: JSON.parse(deepJsonText(70)) } })),
    chat('client key as the body', CLIENT_KEY),
    chat('client key at the start of broken JSON', `${CLIENT_KEY}{"model":"demo"`),
    chat('client key inside broken JSON', `{"model":"${CLIENT_KEY}","messages":[`),
    chat('client key without Bearer', ask('demo'), { authorization: CLIENT_KEY }),
    chat('client key with Basic', ask('demo'), { authorization: `Basic ${Buffer.from(`u:${CLIENT_KEY}`).toString('base64')}` }),
    chat('client key plus a typo', ask('demo'), { authorization: `Bearer ${CLIENT_KEY}x` }),
    chat('client key cut short', ask('demo'), { authorization: `Bearer ${CLIENT_KEY.slice(0, -2)}` }),
    chat('client key in x-api-key', ask('demo'), { 'x-api-key': CLIENT_KEY }),
    chat('other client key on a model it may not use', ask('up-good'), auth(OTHER_CLIENT_KEY)),
    chat('client key as the request id', ask('demo'), { ...auth(), 'x-request-id': CLIENT_KEY }),
    chat('client key as the request id of a failing request', ask('up-echo-500'), { ...auth(), 'x-request-id': f.base64url }),
    chat('client key in the content type', ask('demo'), { ...auth(), 'content-type': `text/plain; key=${CLIENT_KEY}` }),
    {
      name: 'client key in the query',
      method: 'POST',
      path: `/v1/chat/completions?api_key=${CLIENT_KEY}&k=${f.urlencoded}`,
      headers: { ...auth(), 'content-type': 'application/json' },
      body: ask('up-echo-400'),
    },
    { name: 'client key in the path', method: 'POST', path: `/v1/chat/completions/${CLIENT_KEY}`, headers: auth(), body: ask('demo') },
    { name: 'client key as a model id', method: 'GET', path: `/v1/models/${CLIENT_KEY}`, headers: auth() },
    { name: 'client key as a model id, no key', method: 'GET', path: `/v1/models/${f.base64url}` },
    { name: 'client key as a path, wrong method', method: 'DELETE', path: `/${CLIENT_KEY}` },
    { name: 'models', method: 'GET', path: '/v1/models', headers: auth() },
    { name: 'readyz', method: 'GET', path: '/readyz' },
    { name: 'healthz', method: 'GET', path: '/healthz' },
    chat('a good request', ask('demo')),
    chat('a good stream', ask('demo', { stream: true })),
  );
  return steps;
}

interface Received {
  name: string;
  status: number;
  text: string;
}

async function run(step: Step): Promise<Received> {
  const res = await fetch(`${t.url}${step.path ?? '/'}`, {
    method: step.method ?? 'GET',
    headers: step.headers,
    body: step.body === undefined ? undefined : typeof step.body === 'string' ? step.body : JSON.stringify(step.body),
    signal: AbortSignal.timeout(10_000),
  });
  const headers = [...res.headers.entries()].map(([k, v]) => `${k}: ${v}`).join('\n');
  return { name: step.name, status: res.status, text: `${headers}\n\n${await res.text()}` };
}

/** One line per secret and place (a whole copy also matches every fragment), naming the secret by its label only. */
function describeLeaks(leaks: Leak[]): string[] {
  const byPlace = new Map<string, Leak[]>();
  for (const l of leaks) byPlace.set(`${l.secret} in ${l.where}`, [...(byPlace.get(`${l.secret} in ${l.where}`) ?? []), l]);
  return [...byPlace].map(([place, found]) => {
    const whole = found.filter((l) => !l.encoding.startsWith('fragment'));
    const fragments = found.length - whole.length;
    const forms = [...whole.map((l) => l.encoding), ...(fragments ? [`${fragments} fragment(s)`] : [])].join(', ');
    return `${place} as ${forms}: …${(whole[0] ?? found[0]).around.replaceAll('\n', '⏎')}…`;
  });
}

describe('the audit', () => {
  const received: Received[] = [];
  let corpus: Array<{ where: string; text: string }> = [];
  beforeAll(async () => {
    for (const step of script()) received.push(await run(step));
    // Raw requests the fetch client will not send: the key in a header name, an injected line.
    for (const [name, bytes] of [
      ['client key as a header name', `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n${CLIENT_KEY}: 1\r\nContent-Length: 0\r\n\r\n`],
      ['client key in a malformed request line', `GET /${CLIENT_KEY} HTTP/1.1 extra\r\nHost: x\r\n\r\n`],
      ['client key in a bad header', `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${CLIENT_KEY}\r\nX-Bad\u0000: ${CLIENT_KEY}\r\n\r\n`],
    ] as const) {
      const x = await rawExchange(Number(new URL(t.url).port), bytes, 3000);
      received.push({ name, status: x.response?.status ?? 0, text: x.raw.toString('latin1') });
    }
    // Every request has been logged before the corpus is read.
    await new Promise((resolve) => setTimeout(resolve, 100));
    corpus = [...received.map((r) => ({ where: `response to "${r.name}" (${r.status})`, text: r.text })), { where: 'the log', text: t.logText() }];
  }, 60_000);

  const only = (labels: string[]) => Object.fromEntries(Object.entries(SECRETS).filter(([label]) => labels.includes(label)));

  it('no provider key, in any form, in any response or anywhere in the log', () => {
    const leaks = findSecrets(corpus, only(['providers.up.apiKey', 'providers.odd.apiKey', 'providers.envy.apiKey (${AUDIT_ENV_KEY})']));
    expect(describeLeaks(leaks).slice(0, 40), `${leaks.length} finds over ${received.length} exchanges and ${t.logs.length} log lines`).toEqual([]);
  });

  it('no client key, in any form, in any response or anywhere in the log (clients put theirs in odd places)', () => {
    const leaks = findSecrets(corpus, only(['keys.client', 'keys.other']));
    expect(describeLeaks(leaks).slice(0, 40), `${leaks.length} finds over ${received.length} exchanges and ${t.logs.length} log lines`).toEqual([]);
  });

  it('the run reached what it meant to: upstream errors, client errors, successes', () => {
    const statuses = new Set(received.map((r) => r.status));
    for (const s of [200, 400, 401, 404, 429, 502]) expect(statuses, `status ${s} seen`).toContain(s);
    expect(upstream.hits.length).toBeGreaterThan(100);
    expect(t.logText().length).toBeGreaterThan(10_000);
  });
});
