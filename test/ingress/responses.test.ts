/**
 * POST /v1/responses with the official openai SDK: plain, streamed (`responses.stream`), tools
 * with a tool-result follow-up, structured output; served by the offline mock and by native
 * providers against their fake upstreams (recorded payloads). Every object and event is checked
 * against OpenAI's own schema.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { DEV_KEY, expectValid, loadFixture, logLineFor, replay, startFakeUpstream, startTestGateway, type FakeUpstream, type TestGateway } from 'switchyard-gateway/kit/testing';
import { fixturesOf } from '../helpers/repo.ts';

const WEATHER = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'Weather for a city',
  strict: false,
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

let t: TestGateway;
let anthropic: FakeUpstream;
let openai: FakeUpstream;
beforeAll(async () => {
  anthropic = await startFakeUpstream(() => replay(loadFixture(fixturesOf('anthropic'), 'messages-system-prompt')));
  openai = await startFakeUpstream(() => replay(loadFixture(fixturesOf('openai'), 'chat-basic')));
  t = await startTestGateway(`keys:
  - { name: dev, key: ${DEV_KEY} }
providers:
  mock: { plugin: mock }
  claude: { plugin: anthropic, baseUrl: "${anthropic.url}", apiKey: test-anthropic-key }
  oai: { plugin: openai, baseUrl: "${openai.url}/v1", apiKey: test-openai-key }
models:
  demo: { targets: [{ provider: mock, model: mock-1 }] }
  claude: { targets: [{ provider: claude, model: claude-3-opus-latest }] }
  gpt: { targets: [{ provider: oai, model: gpt-4o }] }
`);
});
afterAll(async () => {
  await t.close();
  await anthropic.close();
  await openai.close();
});

describe('POST /v1/responses', () => {
  it('answers a plain request with a schema-valid response naming the model that answered', async () => {
    const r = await t.client().responses.create({ model: 'demo', input: 'Hello', instructions: 'Be brief.' });
    expectValid('Response', r);
    expect(r.status).toBe('completed');
    expect(r.model).toBe('mock-1');
    expect(r.output_text).toContain('Hello from Switchyard');
    expect(r.usage!.input_tokens).toBeGreaterThan(0);
    expect(r.usage!.total_tokens).toBe(r.usage!.input_tokens + r.usage!.output_tokens);
  });

  it('streams the Responses event sequence, every event schema-valid, assembled by the SDK', async () => {
    const stream = t.client().responses.stream({ model: 'demo', input: 'Hello' });
    const types: string[] = [];
    let last = -1;
    stream.on('event', (e) => {
      expectValid('ResponseStreamEvent', e);
      types.push(e.type);
      expect(e.sequence_number).toBeGreaterThan(last);
      last = e.sequence_number;
    });
    const final = await stream.finalResponse();
    expect(types[0]).toBe('response.created');
    expect(types).toContain('response.output_text.delta');
    expect(types.at(-1)).toBe('response.completed');
    expect(final.output_text).toContain('Hello from Switchyard');
  });

  it('calls tools and takes the tool result back', async () => {
    const first = await t.client().responses.create({ model: 'demo', input: 'Weather in Paris?', tools: [WEATHER] });
    expectValid('Response', first);
    const call = first.output.find((o) => o.type === 'function_call');
    expect(call).toMatchObject({ type: 'function_call', name: 'get_weather' });
    expect(() => JSON.parse((call as { arguments: string }).arguments)).not.toThrow();
    const second = await t.client().responses.create({
      model: 'demo',
      tools: [WEATHER],
      input: [{ role: 'user', content: 'Weather in Paris?' }, call as never, { type: 'function_call_output', call_id: (call as { call_id: string }).call_id, output: '{"temp": 21}' }],
    });
    expectValid('Response', second);
    expect(second.output_text).toContain('Hello from Switchyard');
  });

  it('honours text.format json_schema', async () => {
    const r = await t.client().responses.create({
      model: 'demo',
      input: 'weather as json',
      text: { format: { type: 'json_schema', name: 'w', strict: true, schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false } } },
    });
    expectValid('Response', r);
    expect(JSON.parse(r.output_text)).toEqual({ city: expect.any(String) });
  });

  it('is served by native providers through their own translation (anthropic, openai)', async () => {
    const c = await t.client().responses.create({ model: 'claude', input: 'What is the capital of France?' });
    expectValid('Response', c);
    expect(c.output_text).toContain('Paris');
    expect(c.model).toMatch(/^claude-3-opus/);
    expect(anthropic.requests.at(-1)!.url).toBe('/v1/messages');
    const g = await t.client().responses.create({ model: 'gpt', input: 'What is the capital of France?' });
    expectValid('Response', g);
    expect(g.output_text).toContain('Paris');
  });

  it('refuses what a stateless gateway cannot do, with the OpenAI envelope; same keys and log line', async () => {
    const err = await t
      .client()
      .responses.create({ model: 'demo', input: 'x', previous_response_id: 'resp_123' })
      .catch((e: InstanceType<typeof OpenAI.APIError>) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.APIError>).param).toBe('previous_response_id');
    await expect(t.client('sk-nope-0123456789').responses.create({ model: 'demo', input: 'x' })).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
    const ok = await t.client().responses.create({ model: 'demo', input: 'x' }).withResponse();
    const line = await logLineFor(t, ok.response.headers.get('x-request-id')!);
    expect(line).toMatchObject({ model: 'demo', provider: 'mock', status: 200 });
  });
});
