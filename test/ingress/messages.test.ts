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
    const notFound = await client()
      .messages.create({ model: 'nope', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] })
      .catch((e: InstanceType<typeof Anthropic.APIError>) => e);
    expect(notFound).toBeInstanceOf(Anthropic.NotFoundError);
    expect((notFound as InstanceType<typeof Anthropic.APIError>).requestID).toBeTruthy();
    expect((notFound as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ type: 'error', error: { type: 'not_found_error' } });
    await expect(client('sk-narrow-0123456789').messages.create({ model: 'gpt', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] })).rejects.toBeInstanceOf(Anthropic.PermissionDeniedError);
    const bad = await client()
      .messages.create({ model: 'demo', max_tokens: 10, messages: [{ role: 'robot', content: 'x' }] as never })
      .catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(Anthropic.BadRequestError);
  });

  it('is logged like chat, with its ingress, and carries the rate-limit headers of a limited key', async () => {
    const { response } = await client()
      .messages.create({ model: 'demo', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] })
      .withResponse();
    expect(response.headers.get('request-id')).toBeTruthy();
    expect(response.headers.get('x-ratelimit-limit-requests')).toBe('1000');
    const line = await logLineFor(t, response.headers.get('x-request-id')!);
    expect(line).toMatchObject({ model: 'demo', provider: 'mock', status: 200, ingress: 'messages', key: 'dev' });
  });
});

describe('POST /v1/messages to an anthropic target: native pass-through', () => {
  let upstream: FakeUpstream;
  let g: TestGateway;
  let answer = 'messages-usage-cache-read';
  beforeAll(async () => {
    upstream = await startFakeUpstream((req) => (req.url === '/v1/messages/count_tokens' ? { status: 200, body: { input_tokens: 42 } } : replay(loadFixture(fixturesOf('anthropic'), answer))));
    g = await startTestGateway(`keys:
  - { name: dev, key: ${DEV_KEY} }
providers:
  claude: { plugin: anthropic, baseUrl: "${upstream.url}", apiKey: test-anthropic-key }
models:
  sonnet: { targets: [{ provider: claude, model: claude-sonnet-4-5, price: { input: 3, output: 15, cachedInput: 0.3, cacheWrite: 3.75 } }] }
`);
  });
  afterAll(async () => {
    await g.close();
    await upstream.close();
  });
  const anthropicClient = () => new Anthropic({ apiKey: DEV_KEY, baseURL: g.url, maxRetries: 0, defaultHeaders: { 'anthropic-beta': 'prompt-caching-2024-07-31' } });

  it('hands the client body to the upstream unchanged (but the model) and returns its answer untranslated', async () => {
    answer = 'messages-usage-cache-read';
    const body = {
      model: 'sonnet',
      max_tokens: 300,
      system: [{ type: 'text' as const, text: 'You are terse.', cache_control: { type: 'ephemeral' as const } }],
      metadata: { user_id: 'u-42' },
      tools: [{ type: 'web_search_20250305' as const, name: 'web_search' as const, max_uses: 2 }],
      messages: [{ role: 'user' as const, content: 'Hello' }],
    };
    const { data, response } = await anthropicClient().messages.create(body).withResponse();
    const sent = upstream.requests.at(-1)!;
    expect(sent.url).toBe('/v1/messages');
    expect(sent.body).toEqual({ ...body, model: 'claude-sonnet-4-5' });
    expect(sent.headers['anthropic-beta']).toBe('prompt-caching-2024-07-31');
    expect(sent.headers['x-api-key']).toBe('test-anthropic-key');
    // The recorded answer as Anthropic sent it: cache usage fields and all.
    const recorded = loadFixture(fixturesOf('anthropic'), 'messages-usage-cache-read').json as Record<string, unknown>;
    expect(data).toEqual(recorded);
    expect(response.headers.get('x-switchyard-provider')).toBe('claude');
    expect(Number(response.headers.get('x-switchyard-cost-usd'))).toBeGreaterThan(0);
  });

  it('streams the upstream events as they came (thinking signatures included), priced from their usage', async () => {
    answer = 'stream-thinking';
    const events: Array<{ type: string }> = [];
    const stream = anthropicClient().messages.stream({
      model: 'sonnet',
      max_tokens: 2000,
      thinking: { type: 'enabled', budget_tokens: 1024 },
      messages: [{ role: 'user', content: 'Think, then answer.' }],
    });
    // A copy at arrival: the SDK builds its message snapshot inside the message_start event.
    stream.on('streamEvent', (e) => events.push(structuredClone(e)));
    const final = await stream.finalMessage();
    const recorded = loadFixture(fixturesOf('anthropic'), 'stream-thinking')
      .body.toString()
      .split('\n')
      .filter((l) => l.startsWith('data: '))
      .map((l) => JSON.parse(l.slice(6)) as { type: string });
    // The SDK does not surface pings; everything else arrives exactly as Anthropic sent it.
    expect(events).toEqual(recorded.filter((e) => e.type !== 'ping'));
    const thinking = final.content.find((b) => b.type === 'thinking') as { signature?: string } | undefined;
    expect(thinking?.signature).toBeTruthy();
    expect(upstream.requests.at(-1)!.body.thinking).toEqual({ type: 'enabled', budget_tokens: 1024 });
    // On the wire, the pings too.
    const raw = await fetch(`${g.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': DEV_KEY, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'sonnet', max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'x' }] }),
    });
    const text = await raw.text();
    expect(text.match(/^event: /gm)).toHaveLength(recorded.length);
    expect(text).toContain('event: ping\n');
  });

  it('count_tokens is exact: Anthropic counts the body as sent', async () => {
    const body = { model: 'sonnet', system: 'Be brief.', messages: [{ role: 'user' as const, content: 'Hello there' }] };
    const { data, response } = await anthropicClient().messages.countTokens(body).withResponse();
    expect(data).toEqual({ input_tokens: 42 });
    expect(response.headers.get('x-switchyard-token-count')).toBe('exact');
    const sent = upstream.requests.at(-1)!;
    expect(sent.url).toBe('/v1/messages/count_tokens');
    expect(sent.body).toEqual({ ...body, model: 'claude-sonnet-4-5' });
  });
});
