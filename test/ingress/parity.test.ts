/**
 * One policy, every way in: the same key, limit, budget, fallback and cooldown rules hold on
 * /v1/chat/completions, /v1/responses, /v1/messages, /v1/embeddings and the Gemini API, because
 * one pipeline runs them all. Each way in is a small adapter making one request with that
 * protocol's official SDK (openai, or @anthropic-ai/sdk for messages; Gemini's REST call as its
 * docs write it, since the GenAI SDK's ApiError carries no response headers); the battery below
 * is written once and only the error classes and envelope types differ, as each protocol words them.
 */
import { describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { DEV_KEY, fakeUpstream, loadFixture, logLineFor, replay, useTestGateway, type TestGateway } from 'switchyard-gateway/kit/testing';
import { fixturesOf } from '../helpers/repo.ts';

const NARROW = 'sk-parity-narrow-0123456789';
const LIMITED = 'sk-parity-limited-0123456789';
const BUDGETED = 'sk-parity-budget-0123456789';

/** Output tokens asked for on the chat-like ways in: the mock's 22-token greeting is cut to this many. */
const MAX_TOKENS = 16;

/** What the battery needs from one answer. */
interface Answer {
  /** The upstream model that answered, as the protocol's body names it. */
  model: string;
  headers: Headers;
}

/** The SDK's error, with what the battery reads off it. */
interface Failure {
  error: unknown;
  status: number;
  /** The error's type as the protocol's envelope words it: OpenAI's `code`, Anthropic's `error.type`. */
  type: string;
  headers: Headers;
}

interface WayIn {
  name: 'chat' | 'responses' | 'messages' | 'embeddings' | 'gemini';
  /** Makes one request on `model` with `key`, through the protocol's official SDK. */
  ask(t: TestGateway, key: string, model: string): Promise<Answer>;
  /** The SDK error as the battery reads it. */
  failure(error: unknown): Failure;
  /** The SDK's error classes for 403 and 429. */
  PermissionDenied: abstract new (
    ...args: never[]
  ) => unknown;
  RateLimited: abstract new (...args: never[]) => unknown;
  /** Envelope types: key not allowed the model, over its rpm, budget spent. */
  types: { forbidden: string; rateLimited: string; budgetSpent: string };
  /** A target price under which one `ask` on the mock costs exactly $1. */
  price: { input: number; output: number };
  /** Where the openai plugin sends this operation upstream. */
  upstreamPath: string;
}

const openaiFailure = (error: unknown): Failure => {
  const e = error as InstanceType<typeof OpenAI.APIError>;
  return { error, status: e.status ?? 0, type: String(e.code), headers: e.headers ?? new Headers() };
};

const openaiTypes = { forbidden: 'model_not_allowed', rateLimited: 'rate_limit_exceeded', budgetSpent: 'insufficient_quota' };
/** Output only: the reservation's prompt estimate (bytes) and the mock's count (words) differ, so the prompt is free. */
const PER_OUTPUT_TOKEN = { input: 0, output: 1e6 / MAX_TOKENS };

const WAYS_IN: WayIn[] = [
  {
    name: 'chat',
    async ask(t, key, model) {
      const { data, response } = await t
        .client(key)
        .chat.completions.create({ model, max_completion_tokens: MAX_TOKENS, messages: [{ role: 'user', content: 'Hello' }] })
        .withResponse();
      return { model: data.model, headers: response.headers };
    },
    failure: openaiFailure,
    PermissionDenied: OpenAI.PermissionDeniedError,
    RateLimited: OpenAI.RateLimitError,
    types: openaiTypes,
    price: PER_OUTPUT_TOKEN,
    upstreamPath: '/v1/chat/completions',
  },
  {
    name: 'responses',
    async ask(t, key, model) {
      const { data, response } = await t.client(key).responses.create({ model, max_output_tokens: MAX_TOKENS, input: 'Hello' }).withResponse();
      return { model: data.model, headers: response.headers };
    },
    failure: openaiFailure,
    PermissionDenied: OpenAI.PermissionDeniedError,
    RateLimited: OpenAI.RateLimitError,
    types: openaiTypes,
    price: PER_OUTPUT_TOKEN,
    upstreamPath: '/v1/chat/completions',
  },
  {
    name: 'messages',
    async ask(t, key, model) {
      const client = new Anthropic({ apiKey: key, baseURL: t.url, maxRetries: 0 });
      const { data, response } = await client.messages.create({ model, max_tokens: MAX_TOKENS, messages: [{ role: 'user', content: 'Hello' }] }).withResponse();
      return { model: data.model, headers: response.headers };
    },
    failure(error) {
      const e = error as InstanceType<typeof Anthropic.APIError>;
      return { error, status: e.status ?? 0, type: String((e.error as { error?: { type?: string } } | undefined)?.error?.type), headers: e.headers ?? new Headers() };
    },
    PermissionDenied: Anthropic.PermissionDeniedError,
    RateLimited: Anthropic.RateLimitError,
    // Anthropic has no quota type: a spent budget is a 429 rate_limit_error with x-should-retry: false.
    types: { forbidden: 'permission_error', rateLimited: 'rate_limit_error', budgetSpent: 'rate_limit_error' },
    price: PER_OUTPUT_TOKEN,
    upstreamPath: '/v1/chat/completions',
  },
  {
    name: 'embeddings',
    async ask(t, key, model) {
      // One byte, one token: the reservation's estimate and the mock's count agree.
      const { data, response } = await t.client(key).embeddings.create({ model, input: 'a' }).withResponse();
      return { model: data.model, headers: response.headers };
    },
    failure: openaiFailure,
    PermissionDenied: OpenAI.PermissionDeniedError,
    RateLimited: OpenAI.RateLimitError,
    types: openaiTypes,
    // Embeddings generate nothing: only input is priced.
    price: { input: 1e6, output: 0 },
    upstreamPath: '/v1/embeddings',
  },
];

/** A Gemini API call that failed: Google's envelope and the response headers. */
class GeminiHttpError extends Error {
  readonly status: number;
  readonly envelope: { error?: { status?: string } };
  readonly headers: Headers;
  constructor(status: number, envelope: { error?: { status?: string } }, headers: Headers) {
    super(`HTTP ${status}`);
    this.status = status;
    this.envelope = envelope;
    this.headers = headers;
  }
}

WAYS_IN.push({
  name: 'gemini',
  async ask(t, key, model) {
    const res = await fetch(`${t.url}/v1beta/models/${model}:generateContent`, {
      method: 'POST',
      headers: { 'x-goog-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'Hello' }] }], generationConfig: { maxOutputTokens: MAX_TOKENS } }),
    });
    const body = (await res.json()) as { modelVersion?: string; error?: { status?: string } };
    if (!res.ok) throw new GeminiHttpError(res.status, body, res.headers);
    return { model: String(body.modelVersion), headers: res.headers };
  },
  failure(error) {
    const e = error as GeminiHttpError;
    return { error, status: e.status, type: String(e.envelope.error?.status), headers: e.headers };
  },
  PermissionDenied: GeminiHttpError,
  RateLimited: GeminiHttpError,
  // Google's canonical codes: a spent budget is RESOURCE_EXHAUSTED too, with x-should-retry: false.
  types: { forbidden: 'PERMISSION_DENIED', rateLimited: 'RESOURCE_EXHAUSTED', budgetSpent: 'RESOURCE_EXHAUSTED' },
  price: PER_OUTPUT_TOKEN,
  upstreamPath: '/v1/chat/completions',
});

/** The SDK error a call must fail with (fails the test if it succeeds). */
function failed(call: Promise<unknown>): Promise<unknown> {
  return call.then(
    () => {
      throw new Error('the call succeeded but a failure was expected');
    },
    (err: unknown) => err,
  );
}

/** An OpenAI-compatible upstream that is down: 503 in OpenAI's error envelope, for chat and embeddings alike. */
const unavailable = () => replay(loadFixture(fixturesOf('openai'), 'error-500-server-error'), { status: 503 });

describe.each(WAYS_IN)('policy parity: $name', (way) => {
  const down = fakeUpstream(unavailable);
  const flaky = fakeUpstream(unavailable);
  const t = useTestGateway(
    () => `keys:
  - { name: dev, key: ${DEV_KEY} }
  - { name: narrow, key: ${NARROW}, models: [demo] }
  - { name: limited, key: ${LIMITED}, limits: { rpm: 2 } }
  - { name: budgeted, key: ${BUDGETED}, budget: { usd: 2, period: total } }
providers:
  mock: { plugin: mock, embeddingDimensions: 8 }
  down: { plugin: openai, baseUrl: "${down.url}/v1", apiKey: test-down-key }
  flaky: { plugin: openai, baseUrl: "${flaky.url}/v1", apiKey: test-flaky-key }
models:
  demo: { targets: [{ provider: mock, model: mock-1 }] }
  other: { targets: [{ provider: mock, model: mock-2 }] }
  paid: { targets: [{ provider: mock, model: mock-1, price: { input: ${way.price.input}, output: ${way.price.output} } }] }
  fallback: { retry: { attempts: 1 }, targets: [{ provider: down, model: m }, { provider: mock, model: mock-1 }] }
  cooling: { retry: { attempts: 1 }, cooldown: { failures: 1, windowMs: 60000, durationMs: 60000 }, targets: [{ provider: flaky, model: m }, { provider: mock, model: mock-1 }] }
`,
    { upstreams: [down, flaky] },
  );

  it("a key restricted to some models gets the protocol's 403 on another", async () => {
    expect((await way.ask(t, NARROW, 'demo')).model).toBe('mock-1');
    const f = way.failure(await failed(way.ask(t, NARROW, 'other')));
    expect(f.error).toBeInstanceOf(way.PermissionDenied);
    expect(f).toMatchObject({ status: 403, type: way.types.forbidden });
  });

  it("rpm 2: two answers, then the protocol's rate-limit error with retry-after and x-ratelimit-* headers", async () => {
    const first = await way.ask(t, LIMITED, 'demo');
    expect(first.headers.get('x-ratelimit-limit-requests')).toBe('2');
    expect(first.headers.get('x-ratelimit-remaining-requests')).toBe('1');
    const second = await way.ask(t, LIMITED, 'demo');
    expect(second.headers.get('x-ratelimit-remaining-requests')).toBe('0');
    const f = way.failure(await failed(way.ask(t, LIMITED, 'demo')));
    expect(f.error).toBeInstanceOf(way.RateLimited);
    expect(f).toMatchObject({ status: 429, type: way.types.rateLimited });
    expect(Number(f.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(Number(f.headers.get('retry-after-ms'))).toBeGreaterThan(0);
    expect(f.headers.get('x-ratelimit-limit-requests')).toBe('2');
    expect(f.headers.get('x-ratelimit-remaining-requests')).toBe('0');
    expect(f.headers.get('x-ratelimit-reset-requests')).toMatch(/^(\d+m)?[\d.]+m?s$/);
  });

  it('a budget of exactly two requests: two answers at $1 each, then a spent budget that says not to retry', async () => {
    for (let i = 0; i < 2; i++) {
      const answer = await way.ask(t, BUDGETED, 'paid');
      expect(Number(answer.headers.get('x-switchyard-cost-usd'))).toBe(1);
      // Spend is settled after the response, before the log line: wait for it, so the next
      // request sees this one spent rather than still reserved.
      const line = await logLineFor(t, answer.headers.get('x-request-id')!);
      expect(line).toMatchObject({ key: 'budgeted', costUsd: 1, status: 200 });
    }
    const f = way.failure(await failed(way.ask(t, BUDGETED, 'paid')));
    expect(f.error).toBeInstanceOf(way.RateLimited);
    expect(f).toMatchObject({ status: 429, type: way.types.budgetSpent });
    expect(f.headers.get('x-should-retry')).toBe('false');
  });

  it('fallback: the first target answers 503, the second answers, the log line shows both attempts', async () => {
    const answer = await way.ask(t, DEV_KEY, 'fallback');
    expect(answer.model).toBe('mock-1');
    expect(answer.headers.get('x-switchyard-provider')).toBe('mock');
    expect(down.requests).toHaveLength(1);
    expect(down.requests[0].url).toBe(way.upstreamPath);
    expect(down.requests[0].body.model).toBe('m');
    const line = await logLineFor(t, answer.headers.get('x-request-id')!);
    expect(line).toMatchObject({ model: 'fallback', provider: 'mock', status: 200, attempts: 2 });
    expect(line.attemptLog).toMatchObject([
      { provider: 'down', status: 503, outcome: 'error' },
      { provider: 'mock', outcome: 'ok' },
    ]);
    if (way.name !== 'chat') expect(line.ingress).toBe(way.name);
  });

  it('cooldown after one failure: the next request skips the failed target without calling it', async () => {
    const first = await way.ask(t, DEV_KEY, 'cooling');
    expect(first.model).toBe('mock-1');
    expect(flaky.requests).toHaveLength(1);
    const second = await way.ask(t, DEV_KEY, 'cooling');
    expect(second.model).toBe('mock-1');
    expect(flaky.requests).toHaveLength(1);
    const line = await logLineFor(t, second.headers.get('x-request-id')!);
    expect(line).toMatchObject({ provider: 'mock', status: 200, attempts: 1 });
    expect(line.attemptLog).toMatchObject([
      { provider: 'flaky', outcome: 'skipped' },
      { provider: 'mock', outcome: 'ok' },
    ]);
  });
});
