/**
 * The official openai SDK against limited keys: a rate limit is its RateLimitError with OpenAI's
 * headers; a spent budget (insufficient_quota) and a model without a price for a key with a
 * budget are not retried by its default retries: the gateway sees exactly one request.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { failureOf, useTestGateway } from 'switchyard-gateway/kit/testing';
import { startUsageUpstream, type UsageUpstream } from './helpers.ts';

const RPM_KEY = 'sk-sdk-rpm-0123456789';
const BROKE_KEY = 'sk-sdk-broke-0123456789';

let upstream: UsageUpstream;
beforeAll(async () => {
  upstream = await startUsageUpstream({ prompt: 10, completion: 5 });
});
afterAll(() => upstream.close());

/** Chat requests that reached the gateway, per bearer token, counted as each one starts. */
const arrived = new Map<string, number>();
const t = useTestGateway(
  () =>
    [
      'keys:',
      `  - { name: sdk-rpm, key: ${RPM_KEY}, models: ["*"], limits: { rpm: 1, tpm: 100000 } }`,
      // Less than one request's worst case at gpt-4o's rates (4096 output tokens × $10/M alone is $0.04).
      `  - { name: sdk-broke, key: ${BROKE_KEY}, models: ["*"], budget: { usd: 0.001, period: monthly } }`,
      'providers:',
      `  up: { plugin: openai, baseUrl: "${upstream.baseUrl}" }`,
      'models:',
      '  gpt: { targets: [{ provider: up, model: gpt-4o }] }',
      '  mystery: { targets: [{ provider: up, model: unknown-model-xyz }] }',
    ].join('\n'),
  {
    observers: [
      {
        requestStarted(ctx) {
          const auth = String(ctx.headers.authorization ?? '');
          arrived.set(auth, (arrived.get(auth) ?? 0) + 1);
        },
      },
    ],
  },
);

const requestsOf = (key: string) => arrived.get(`Bearer ${key}`) ?? 0;
const ask = (client: OpenAI, model = 'gpt', tag = 'sdk') => client.chat.completions.create({ model, messages: [{ role: 'user', content: tag }] });
/** The SDK as an application builds it: default retries (2), which honour x-should-retry. */
const defaultClient = (apiKey: string) => new OpenAI({ apiKey, baseURL: t.baseURL });

describe('the openai SDK and limited keys', () => {
  it('over rpm: RateLimitError (429 rate_limit_exceeded, type requests) with the x-ratelimit headers and retry-after-ms', async () => {
    const client = t.client(RPM_KEY, { maxRetries: 0 });
    const first = await ask(client).withResponse();
    expect(first.response.headers.get('x-ratelimit-limit-requests')).toBe('1');
    expect(first.response.headers.get('x-ratelimit-remaining-requests')).toBe('0');
    expect(first.response.headers.get('x-ratelimit-limit-tokens')).toBe('100000');
    const err = await failureOf(ask(client));
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect(err.status).toBe(429);
    expect(err.code).toBe('rate_limit_exceeded');
    expect(err.type).toBe('requests');
    expect(err.message).toContain('Rate limit reached for key sdk-rpm on requests per min (RPM): Limit 1, Used 1, Requested 1.');
    expect(err.headers?.get('x-ratelimit-limit-requests')).toBe('1');
    expect(err.headers?.get('x-ratelimit-remaining-requests')).toBe('0');
    expect(err.headers?.get('x-ratelimit-reset-requests')).toMatch(/^(\d+ms|(\d+m)?[\d.]+s)$/);
    expect(Number(err.headers?.get('retry-after-ms'))).toBeGreaterThan(0);
    expect(Number(err.headers?.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(err.requestID ?? err.headers?.get('x-request-id')).toBeTruthy();
  });

  it('a spent budget: insufficient_quota, which the SDK does not retry with its default retries (exactly 1 request at the gateway)', async () => {
    const client = defaultClient(BROKE_KEY);
    expect(client.maxRetries).toBe(2);
    const before = requestsOf(BROKE_KEY);
    const err = await failureOf(ask(client, 'gpt', 'sdk-broke'));
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect(err.code).toBe('insufficient_quota');
    expect(err.type).toBe('insufficient_quota');
    expect(err.message).toMatch(
      /^429 You exceeded your current quota: key sdk-broke has used \$0\.00 of its \$0\.001 budget, and this request may cost up to \$0\.04\. The budget resets at \d{4}-\d{2}-01T00:00:00\.000Z\.$/,
    );
    expect(err.headers?.get('x-should-retry')).toBe('false');
    // The SDK has given up (retries included) once the call rejects: every request it sent has arrived.
    expect(requestsOf(BROKE_KEY)).toBe(before + 1);
    expect(upstream.count('sdk-broke').requests).toBe(0);
  });

  it('a key with a budget asking for a model without a price: PermissionDeniedError, not retried, never sent upstream', async () => {
    const client = defaultClient(BROKE_KEY);
    const before = requestsOf(BROKE_KEY);
    const err = await failureOf(ask(client, 'mystery', 'sdk-unpriced'));
    expect(err).toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect(err.code).toBe('model_not_allowed');
    expect(err.message).toContain('has a budget, and the model it asked for has no price configured');
    // The SDK has given up (retries included) once the call rejects: every request it sent has arrived.
    expect(requestsOf(BROKE_KEY)).toBe(before + 1);
    expect(upstream.count('sdk-unpriced').requests).toBe(0);
  });
});
