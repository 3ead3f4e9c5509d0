/**
 * POST /v1/messages with the official @anthropic-ai/sdk (x-api-key auth): messages.create,
 * messages.stream for text and tools, count_tokens, and the SDK's own error classes; served by
 * the offline mock and by an OpenAI-compatible upstream replaying recorded answers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Anthropic from '@anthropic-ai/sdk';
import { DEV_KEY, loadFixture, logLineFor, replay, startFakeUpstream, startTestGateway, type FakeUpstream, type TestGateway } from 'switchyard-gateway/kit/testing';
import { fixturesOf } from '../helpers/repo.ts';

let t: TestGateway;
let openai: FakeUpstream;
const client = (apiKey = DEV_KEY) => new Anthropic({ apiKey, baseURL: t.url, maxRetries: 0 });
const WEATHER = { name: 'get_weather', description: 'Weather for a city', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] } };

beforeAll(async () => {
  openai = await startFakeUpstream(() => replay(loadFixture(fixturesOf('openai'), 'chat-basic')));
  t = await startTestGateway(`keys:
  - { name: dev, key: ${DEV_KEY}, limits: { rpm: 1000 } }
  - { name: narrow, key: sk-narrow-0123456789, models: [demo] }
providers:
  mock: { plugin: mock }
  oai: { plugin: openai, baseUrl: "${openai.url}/v1", apiKey: test-openai-key }
models:
  demo: { targets: [{ provider: mock, model: mock-1 }] }
  gpt: { targets: [{ provider: oai, model: gpt-4o }] }
`);
});
afterAll(async () => {
  await t.close();
  await openai.close();
});

describe('POST /v1/messages', () => {
  it('messages.create: an Anthropic message naming the model that answered, usage in Anthropic terms', async () => {
    const m = await client().messages.create({ model: 'demo', max_tokens: 200, system: 'Be brief.', messages: [{ role: 'user', content: 'Hello' }] });
    expect(m.type).toBe('message');
    expect(m.role).toBe('assistant');
    expect(m.model).toBe('mock-1');
    expect(m.stop_reason).toBe('end_turn');
    expect(m.content[0]).toMatchObject({ type: 'text', text: expect.stringContaining('Hello from Switchyard') });
    expect(m.usage.input_tokens).toBeGreaterThan(0);
    const g = await client().messages.create({ model: 'gpt', max_tokens: 100, messages: [{ role: 'user', content: 'What is the capital of France?' }] });
    expect(g.content[0]).toMatchObject({ type: 'text', text: expect.stringContaining('Paris') });
    expect(openai.requests.at(-1)!.body.max_completion_tokens).toBe(100);
  });

  it('messages.stream: Anthropic events the SDK assembles, for text and for tool use', async () => {
    const events: string[] = [];
    const stream = client().messages.stream({ model: 'demo', max_tokens: 200, messages: [{ role: 'user', content: 'Hello' }] });
    stream.on('streamEvent', (e) => events.push(e.type));
    const text = await stream.finalText();
    expect(text).toContain('Hello from Switchyard');
    expect(events[0]).toBe('message_start');
    expect(events).toContain('content_block_delta');
    expect(events.at(-1)).toBe('message_stop');

    const tools = client().messages.stream({ model: 'demo', max_tokens: 200, tools: [WEATHER], messages: [{ role: 'user', content: 'Weather in Paris?' }] });
    const final = await tools.finalMessage();
    expect(final.stop_reason).toBe('tool_use');
    const use = final.content.find((b) => b.type === 'tool_use');
    expect(use).toMatchObject({ type: 'tool_use', name: 'get_weather', input: { city: expect.any(String) } });
    // The tool result goes back as Anthropic clients send it.
    const next = await client().messages.create({
      model: 'demo',
      max_tokens: 200,
      tools: [WEATHER],
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: final.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: (use as { id: string }).id, content: '21 degrees' }] },
      ],
    });
    expect(next.stop_reason).toBe('end_turn');
  });

  it('count_tokens estimates, after the same key and model checks', async () => {
    const n = await client().messages.countTokens({ model: 'demo', messages: [{ role: 'user', content: 'Hello there, how are you?' }] });
    expect(n.input_tokens).toBeGreaterThan(0);
    await expect(client('sk-narrow-0123456789').messages.countTokens({ model: 'gpt', messages: [{ role: 'user', content: 'x' }] })).rejects.toBeInstanceOf(Anthropic.PermissionDeniedError);
  });

  it("errors arrive as the Anthropic SDK's own classes, with request-id", async () => {
    await expect(client('sk-wrong-0123456789').messages.create({ model: 'demo', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] })).rejects.toBeInstanceOf(Anthropic.AuthenticationError);
    const notFound = await client().messages.create({ model: 'nope', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }).catch((e: InstanceType<typeof Anthropic.APIError>) => e);
    expect(notFound).toBeInstanceOf(Anthropic.NotFoundError);
    expect((notFound as InstanceType<typeof Anthropic.APIError>).requestID).toBeTruthy();
    expect((notFound as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ type: 'error', error: { type: 'not_found_error' } });
    await expect(client('sk-narrow-0123456789').messages.create({ model: 'gpt', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] })).rejects.toBeInstanceOf(Anthropic.PermissionDeniedError);
    const bad = await client().messages.create({ model: 'demo', max_tokens: 10, messages: [{ role: 'robot', content: 'x' }] as never }).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(Anthropic.BadRequestError);
  });

  it('is logged like chat, with its ingress, and carries the rate-limit headers of a limited key', async () => {
    const { response } = await client().messages.create({ model: 'demo', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }).withResponse();
    expect(response.headers.get('request-id')).toBeTruthy();
    expect(response.headers.get('x-ratelimit-limit-requests')).toBe('1000');
    const line = await logLineFor(t, response.headers.get('x-request-id')!);
    expect(line).toMatchObject({ model: 'demo', provider: 'mock', status: 200, ingress: 'messages', key: 'dev' });
  });
});
