/** Azure OpenAI: deployment and v1 URLs, api-key auth, and Azure's stream and error quirks. */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { loadFixture, replay, startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts';
import { configYaml, failureOf, startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { FakeClock } from '../helpers/clock.ts';
import { expectValid } from '../helpers/schema.ts';

const f = (name: string) => loadFixture('azure', name);
const KEY = 'azure-test-key-0123456789';
let azure: FakeUpstream;
let t: TestGateway;
const clock = new FakeClock(1);

beforeAll(async () => {
  azure = await startFakeUpstream(() => replay(f('chat-basic')));
  t = await startTestGateway(
    configYaml({
      providers: `  az: { plugin: azure-openai, endpoint: "${azure.url}/", apiKey: ${KEY}, apiVersion: 2024-12-01-preview }\n  az1: { plugin: azure-openai, endpoint: "${azure.url}", apiKey: ${KEY}, mode: v1 }\n  mock: { plugin: mock }`,
      models: [
        '  nano: { retry: { attempts: 2, maxRetryAfterMs: 5000 }, fallbacks: { contentPolicy: [safe] }, targets: [{ provider: az, model: gpt-5-nano }] }',
        '  nano-v1: { targets: [{ provider: az1, model: gpt-5-nano }] }',
        '  safe: { targets: [{ provider: mock, model: safe-1 }] }',
      ].join('\n'),
    }),
    { clock },
  );
});
afterEach(() => {
  azure.setHandler(() => replay(f('chat-basic')));
  azure.reset();
  clock.sleeps.length = 0;
});
afterAll(async () => {
  await t.close();
  await azure.close();
});

const chat = (model = 'nano') => t.client().chat.completions.create({ model, messages: [{ role: 'user', content: 'Hello!' }] });

describe('azure-openai', () => {
  it('calls the deployment URL with api-version and the api-key header', async () => {
    const r = await chat();
    expectValid('CreateChatCompletionResponse', r);
    expect(r.model).toBe('gpt-5-nano-2025-08-07');
    expect((r.choices[0] as unknown as { content_filter_results: unknown }).content_filter_results).toEqual({});
    expect(azure.requests[0].url).toBe('/openai/deployments/gpt-5-nano/chat/completions?api-version=2024-12-01-preview');
    expect(azure.requests[0].headers['api-key']).toBe(KEY);
    expect(azure.requests[0].headers.authorization).toBeUndefined();
    expect(azure.requests[0].body).toEqual({ model: 'gpt-5-nano', messages: [{ role: 'user', content: 'Hello!' }] });
  });

  it('the v1 form puts the model in the body', async () => {
    await chat('nano-v1');
    expect(azure.requests[0].url).toBe('/openai/v1/chat/completions');
    expect(azure.requests[0].body.model).toBe('gpt-5-nano');
  });

  it('folds the prompt_filter_results preamble of a stream into the first real chunk', async () => {
    azure.setHandler(() => replay(f('stream-basic-content-filter')));
    const stream = await t.client().chat.completions.create({ model: 'nano', stream: true, messages: [{ role: 'user', content: 'Hello!' }] });
    const chunks = [];
    for await (const chunk of stream) {
      expectValid('CreateChatCompletionStreamResponse', chunk);
      chunks.push(chunk as typeof chunk & { prompt_filter_results?: unknown });
    }
    expect(chunks[0].id).toMatch(/^chatcmpl-/);
    expect(chunks[0].prompt_filter_results).toBeDefined();
    expect(chunks.every((c) => c.id !== '' && c.model !== '')).toBe(true);
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('').length).toBeGreaterThan(0);
  });

  it('a content-filter 400 keeps its message and falls back to the contentPolicy alias', async () => {
    azure.setHandler(() => replay(f('error-400-content-filter')));
    const r = await chat();
    expect(r.model).toBe('safe-1');
  });

  it('a 429 with the wait only in its message is retried after that wait', async () => {
    azure.setHandler((_req, i) => (i === 0 ? replay(f('error-429-rate-limit')) : replay(f('chat-basic'))));
    await chat();
    expect(clock.sleeps).toEqual([2000]);
    azure.setHandler(() => replay(f('error-429-rate-limit')));
    const err = await failureOf(chat());
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect(err.message).toContain('az: Rate limit is exceeded. Try again in 2 seconds. (az code: 429)');
    expect(err.headers?.get('retry-after')).toBe('2');
  });
});
