/**
 * What held when the gateway was attacked, kept proven: no client-controlled upstream (no body
 * field or header changes where a request goes), the client's Authorization never reaches an
 * upstream, upstream headers are not passed on, a body over bodyLimit is refused without being
 * buffered, and 1,000 concurrent streams all arrive intact.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeUpstream, startTestGateway, type FakeUpstream, type ScriptedResponse, type TestGateway } from '../../src/kit/testing/index.ts';
import { CLIENT_KEY, chunk, mapLimit, rawExchange, UPSTREAM_SECRET } from './helpers.ts';

let t: TestGateway;
let upstream: FakeUpstream;
let elsewhere: FakeUpstream;

beforeAll(async () => {
  // A second server that no configuration names: nothing a client sends may reach it.
  elsewhere = await startFakeUpstream(() => ({ status: 200, body: { hijacked: true } }));
  upstream = await startFakeUpstream(
    (req): ScriptedResponse =>
      req.body?.stream
        ? { status: 200, headers: { 'content-type': 'text/event-stream', 'x-upstream-secret': UPSTREAM_SECRET }, chunks: [chunk('Hel'), chunk('lo', 'stop'), 'data: [DONE]\n\n'] }
        : {
            status: 200,
            headers: { 'content-type': 'application/json', 'x-upstream-secret': UPSTREAM_SECRET, 'set-cookie': 'session=upstream' },
            body: {
              id: 'c1',
              object: 'chat.completion',
              created: 1,
              model: 'up-1',
              choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }],
              usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
            },
          },
  );
  t = await startTestGateway(`keys:
  - { name: client, key: ${CLIENT_KEY} }
server: { bodyLimit: 1mb }
providers:
  up: { plugin: openai, baseUrl: "${upstream.url}/v1", apiKey: "${UPSTREAM_SECRET}" }
models:
  m: { retry: { attempts: 1 }, targets: [{ provider: up, model: up-1 }] }
`);
});
afterAll(async () => {
  await t.close();
  await upstream.close();
  await elsewhere.close();
});

const post = (body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${t.baseURL}/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${CLIENT_KEY}`, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

describe("where a request goes is the configuration's business only", () => {
  it('body fields and headers that name another host change nothing', async () => {
    const target = new URL(elsewhere.url);
    const res = await post(
      { model: 'm', messages: [{ role: 'user', content: 'x' }], base_url: elsewhere.url, api_base: elsewhere.url, baseURL: elsewhere.url, endpoint: elsewhere.url, provider: 'up' },
      { 'x-forwarded-host': target.host, 'x-forwarded-proto': 'http', forwarded: `host=${target.host}`, 'x-original-url': elsewhere.url, 'x-host': target.host, 'x-base-url': elsewhere.url },
    );
    expect(res.status).toBe(200);
    expect(elsewhere.requests).toHaveLength(0);
    expect(upstream.requests.at(-1)!.url).toBe('/v1/chat/completions');
  });

  it("the client's key never reaches an upstream; the upstream gets the gateway's own", async () => {
    await post({ model: 'm', messages: [{ role: 'user', content: 'x' }] });
    const sent = upstream.requests.at(-1)!;
    expect(sent.headers.authorization).toBe(`Bearer ${UPSTREAM_SECRET}`);
    expect(JSON.stringify(sent.headers)).not.toContain(CLIENT_KEY);
    expect(sent.raw).not.toContain(CLIENT_KEY);
  });

  it("an upstream's headers are not passed on to the client (plain or streamed)", async () => {
    const plain = await post({ model: 'm', messages: [{ role: 'user', content: 'x' }] });
    expect(plain.headers.get('x-upstream-secret')).toBeNull();
    expect(plain.headers.get('set-cookie')).toBeNull();
    const streamed = await post({ model: 'm', stream: true, messages: [{ role: 'user', content: 'x' }] });
    expect(streamed.headers.get('x-upstream-secret')).toBeNull();
    expect(await streamed.text()).toContain('data: [DONE]');
  });
});

describe('bodyLimit', () => {
  it('a body over the limit is refused with 413 at once, without being read whole', async () => {
    const port = Number(new URL(t.url).port);
    const head = `POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${CLIENT_KEY}\r\ncontent-type: application/json\r\ncontent-length: ${50 * 1024 * 1024}\r\n\r\n`;
    // The declared 50 MB never arrive: only the headers and a first slice are sent.
    const x = await rawExchange(
      port,
      async (socket) => {
        socket.write(head);
        socket.write(Buffer.alloc(64 * 1024, 'a'));
      },
      4000,
    );
    expect(x.response?.status).toBe(413);
    expect(JSON.parse(x.response!.body.toString()).error.code).toBe('request_too_large');
  });
});

describe('many streams at once', () => {
  it('1,000 concurrent streams all arrive intact', async () => {
    const results = await mapLimit(
      Array.from({ length: 1000 }, (_, i) => i),
      1000,
      async () => {
        const res = await post({ model: 'm', stream: true, messages: [{ role: 'user', content: 'x' }] });
        return { status: res.status, text: await res.text() };
      },
    );
    const broken = results.filter((r) => r.status !== 200 || !r.text.includes('"Hel"') || !r.text.includes('"lo"') || !r.text.trimEnd().endsWith('data: [DONE]'));
    expect(broken).toHaveLength(0);
  }, 60_000);
});
