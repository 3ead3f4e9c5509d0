/**
 * /v1/messages/count_tokens runs the pipeline like any request: a target that counts answers
 * exactly, one that fails is failed over, a target that cannot count gets the gateway's estimate;
 * each count has its log line and its attempts in the metrics.
 */
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEV_KEY, logLineFor, startFakeUpstream, startTestGateway, type FakeUpstream, type TestGateway } from 'switchyard-gateway/kit/testing';

let broken: FakeUpstream;
let counting: FakeUpstream;
let t: TestGateway;
const client = () => new Anthropic({ apiKey: DEV_KEY, baseURL: t.url, maxRetries: 0 });
const BODY = { model: 'claude', messages: [{ role: 'user' as const, content: 'How many tokens is this?' }] };

beforeAll(async () => {
  broken = await startFakeUpstream(() => ({ status: 503, body: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } }));
  counting = await startFakeUpstream((req) => (req.url === '/v1/messages/count_tokens' ? { status: 200, body: { input_tokens: 17 } } : { status: 404, body: {} }));
  t = await startTestGateway(`keys:
  - { name: dev, key: ${DEV_KEY} }
providers:
  claude-a: { plugin: anthropic, baseUrl: "${broken.url}", apiKey: test-key-a }
  claude-b: { plugin: anthropic, baseUrl: "${counting.url}", apiKey: test-key-b }
  mock: { plugin: mock }
models:
  claude:
    targets: [{ provider: claude-a, model: claude-sonnet-4-5 }, { provider: claude-b, model: claude-sonnet-4-5 }]
    retry: { attempts: 1 }
  demo: { targets: [{ provider: mock, model: mock-1 }] }
`);
});
afterAll(async () => {
  await t.close();
  await broken.close();
  await counting.close();
});

describe('count_tokens through the pipeline', () => {
  it('fails over from a target that fails to one that counts, exactly, with a log line', async () => {
    const { data, response } = await client().messages.countTokens(BODY).withResponse();
    expect(data).toEqual({ input_tokens: 17 });
    expect(response.headers.get('x-switchyard-token-count')).toBe('exact');
    expect(response.headers.get('x-switchyard-provider')).toBe('claude-b');
    expect(response.headers.get('x-switchyard-attempts')).toBe('2');
    expect(broken.requests.at(-1)!.url).toBe('/v1/messages/count_tokens');
    const line = await logLineFor(t, response.headers.get('request-id')!);
    expect(line).toMatchObject({ ingress: 'messages', operation: 'count_tokens', model: 'claude', provider: 'claude-b', status: 200, attempts: 2, key: 'dev' });
    expect(line.attemptLog.map((a: { provider: string; outcome: string }) => `${a.provider}:${a.outcome}`)).toEqual(['claude-a:error', 'claude-b:ok']);
  });

  it('counts its attempts in the metrics like any operation', async () => {
    const metrics = await (await fetch(`${t.url.replace(/\/v1$/, '')}/metrics`)).text();
    expect(metrics).toMatch(/switchyard_attempts_total\{[^}]*provider="claude-a"[^}]*outcome="failed_over"[^}]*\} [1-9]/);
    expect(metrics).toMatch(/switchyard_attempts_total\{[^}]*provider="claude-b"[^}]*outcome="succeeded"[^}]*\} [1-9]/);
  });

  it("a target that cannot count answers with the gateway's estimate", async () => {
    const { data, response } = await client()
      .messages.countTokens({ ...BODY, model: 'demo' })
      .withResponse();
    expect(data.input_tokens).toBeGreaterThan(0);
    expect(response.headers.get('x-switchyard-token-count')).toBe('estimate');
    expect(response.headers.get('x-switchyard-provider')).toBe('mock');
  });
});
