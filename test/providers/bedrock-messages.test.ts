/**
 * Claude on Bedrock in Anthropic's own Messages body (InvokeModel and
 * InvokeModelWithResponseStream), against the loopback Bedrock of the AWS emulator, which
 * answers only requests signed with keys it issued: chat requests translated by the kit's
 * Anthropic translation, and `/v1/messages` passed through with thinking signatures,
 * cache_control and betas unchanged; prompt-cache reads and writes in the usage.
 */
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEV_KEY, expectValid, readSseEvents, startTestGateway, type TestGateway } from 'switchyard-gateway/kit/testing';
import { startAwsEmulator, type AwsEmulator } from '../helpers/aws-emulator.ts';

const CLAUDE = 'us.anthropic.claude-sonnet-4-5-20250929-v1:0';
const NOVA = 'us.amazon.nova-micro-v1:0';
let aws: AwsEmulator;
let t: TestGateway;

beforeAll(async () => {
  aws = await startAwsEmulator();
  const keys = aws.staticKeys();
  const provider = (name: string, api: string) =>
    `  ${name}: { plugin: bedrock, region: us-east-1, endpoint: "${aws.bedrock.url}", api: ${api}, maxTokens: 1024, auth: { type: aws-keys, accessKeyId: ${keys.accessKeyId}, secretAccessKey: "\${SECRET}" } }`;
  t = await startTestGateway(
    [
      `keys: [{ name: dev, key: ${DEV_KEY}, models: ["*"] }]`,
      'providers:',
      provider('claude-messages', 'messages'),
      provider('mixed', 'auto'),
      'models:',
      `  claude: { retry: { attempts: 1 }, targets: [{ provider: claude-messages, model: "${CLAUDE}" }] }`,
      `  auto-claude: { retry: { attempts: 1 }, targets: [{ provider: mixed, model: "${CLAUDE}" }] }`,
      `  auto-nova: { retry: { attempts: 1 }, targets: [{ provider: mixed, model: "${NOVA}" }] }`,
    ].join('\n'),
    { env: { SECRET: keys.secretAccessKey } },
  );
});
afterAll(async () => {
  await t?.close();
  await aws?.close();
});

const sent = () => aws.bedrock.requests.at(-1)!;
const anthropic = () => new Anthropic({ apiKey: DEV_KEY, baseURL: t.url, maxRetries: 0, defaultHeaders: { 'anthropic-beta': 'interleaved-thinking-2025-05-14, context-1m-2025-08-07' } });

describe('chat requests to Claude: the Messages body on InvokeModel', () => {
  it('api: auto sends a Claude model id to /invoke with anthropic_version and no model or stream, and prices cache reads and writes', async () => {
    const r = await t.client().chat.completions.create({
      model: 'auto-claude',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'hi' },
      ],
    });
    expectValid('CreateChatCompletionResponse', r);
    expect(r.choices[0].message.content).toBe('hello via invoke');
    expect(sent().url).toBe(`/model/${encodeURIComponent(CLAUDE)}/invoke`);
    expect(sent().body).toEqual({ anthropic_version: 'bedrock-2023-05-31', max_tokens: 1024, system: 'Be brief.', messages: [{ role: 'user', content: 'hi' }] });
    // input 12 + cache read 100 + cache write 20
    expect(r.usage).toMatchObject({ prompt_tokens: 132, completion_tokens: 5, prompt_tokens_details: { cached_tokens: 100 } });
    expect(aws.refused).toEqual([]);
  });

  it('api: auto keeps other models on Converse', async () => {
    const r = await t.client().chat.completions.create({ model: 'auto-nova', messages: [{ role: 'user', content: 'hi' }] });
    expect(r.choices[0].message.content).toBe('hello via converse');
    expect(sent().url).toBe(`/model/${encodeURIComponent(NOVA)}/converse`);
  });

  it("the parameter checks follow the API: top_k reaches Claude's Messages body, and is reported dropped (refused when strict) on Converse", async () => {
    const post = (model: string, strict = false) =>
      fetch(`${t.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${DEV_KEY}`, 'content-type': 'application/json', ...(strict && { 'x-switchyard-strict': 'true' }) },
        body: JSON.stringify({ model, top_k: 5, messages: [{ role: 'user', content: 'hi' }] }),
      });
    for (const model of ['claude', 'auto-claude']) {
      const r = await post(model, true);
      expect(r.status).toBe(200);
      expect(r.headers.get('x-switchyard-dropped')).toBeNull();
      expect(sent().body.top_k).toBe(5);
    }
    const converse = await post('auto-nova');
    expect(converse.status).toBe(200);
    expect(converse.headers.get('x-switchyard-dropped')).toContain('top_k');
    expect(sent().url).toBe(`/model/${encodeURIComponent(NOVA)}/converse`);
    expect(JSON.stringify(sent().body)).not.toContain('top_k');
    const before = aws.bedrock.requests.length;
    expect((await post('auto-nova', true)).status).toBe(400);
    expect(aws.bedrock.requests.length).toBe(before);
  });

  it('streams through /invoke-with-response-stream: chunk events unwrapped from the AWS event stream', async () => {
    const stream = await t.client().chat.completions.create({ model: 'claude', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'hi' }] });
    let text = '';
    let usage: unknown;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe('hello via invoke');
    expect(sent().url).toBe(`/model/${encodeURIComponent(CLAUDE)}/invoke-with-response-stream`);
    expect(sent().body.stream).toBeUndefined();
    expect(usage).toMatchObject({ prompt_tokens: 132, completion_tokens: 5, prompt_tokens_details: { cached_tokens: 100 } });
  });
});

describe('/v1/messages passed through (api: messages)', () => {
  const request = {
    model: 'claude',
    max_tokens: 2048,
    thinking: { type: 'enabled' as const, budget_tokens: 1024 },
    system: [{ type: 'text' as const, text: 'A long system prompt worth caching.', cache_control: { type: 'ephemeral' as const } }],
    messages: [
      { role: 'user' as const, content: 'first' },
      {
        role: 'assistant' as const,
        content: [
          { type: 'thinking' as const, thinking: 'Earlier thought.', signature: 'EuYBCkQYAiJAprevsig' },
          { type: 'text' as const, text: 'first answer' },
        ],
      },
      { role: 'user' as const, content: [{ type: 'text' as const, text: 'second', cache_control: { type: 'ephemeral' as const } }] },
    ],
  };

  it('the client body arrives unchanged but for Bedrock model, version and betas; the answer comes back as Bedrock gave it', async () => {
    const message = await anthropic().messages.create(request);
    expect(sent().url).toBe(`/model/${encodeURIComponent(CLAUDE)}/invoke`);
    const { model: _model, ...rest } = request;
    expect(sent().body).toEqual({ anthropic_version: 'bedrock-2023-05-31', anthropic_beta: ['interleaved-thinking-2025-05-14', 'context-1m-2025-08-07'], ...rest });
    expect(sent().headers['anthropic-beta']).toBeUndefined();
    expect(message.content).toEqual([
      { type: 'thinking', thinking: 'Let me think.', signature: 'EqQBCkYIBxgCKkBsig' },
      { type: 'text', text: 'hello via invoke' },
    ]);
    expect(message.usage).toMatchObject({ input_tokens: 12, cache_read_input_tokens: 100, cache_creation_input_tokens: 20 });
    expect(aws.refused).toEqual([]);
  });

  it('streamed: the Anthropic events inside the chunk frames reach the client as SSE, signature_delta included', async () => {
    const res = await fetch(`${t.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': DEV_KEY, 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ ...request, stream: true }),
    });
    expect(res.status).toBe(200);
    expect(sent().url).toBe(`/model/${encodeURIComponent(CLAUDE)}/invoke-with-response-stream`);
    expect(sent().body.stream).toBeUndefined();
    expect(sent().body.thinking).toEqual(request.thinking);
    const events = (await readSseEvents(res)).map((block) => ({
      event: /^event: (.+)$/m.exec(block)?.[1],
      data: JSON.parse(/^data: (.+)$/m.exec(block)?.[1] ?? 'null') as unknown,
    }));
    const names = events.map((e) => e.event);
    expect(names[0]).toBe('message_start');
    expect(names.at(-1)).toBe('message_stop');
    const deltas = events.filter((e) => e.event === 'content_block_delta').map((e) => (e.data as { delta: Record<string, string> }).delta);
    expect(deltas).toEqual([
      { type: 'thinking_delta', thinking: 'Let me think.' },
      { type: 'signature_delta', signature: 'EqQBCkYIBxgCKkBsig' },
      { type: 'text_delta', text: 'hello via invoke' },
    ]);
  });

  it('count_tokens: CountTokens of the InvokeModel body the client would send (thinking, cache marks, betas as sent), answered in Anthropic’s shape, exact', async () => {
    const { model: _model, max_tokens: _max, ...counted } = request;
    const { data, response } = await anthropic()
      .messages.countTokens({ ...counted, model: 'claude' } as never)
      .withResponse();
    expect(response.headers.get('x-switchyard-token-count')).toBe('exact');
    expect(sent().url).toBe(`/model/${encodeURIComponent(CLAUDE)}/count-tokens`);
    expect(sent().headers.authorization).toMatch(/^AWS4-HMAC-SHA256 /);
    const invoked = JSON.parse(Buffer.from(sent().body.input.invokeModel.body, 'base64').toString('utf8'));
    // InvokeModel needs a max_tokens count_tokens has not: the provider's maxTokens (1024) leaves no room for the 1024 thinking budget, so 1025.
    expect(invoked).toEqual({ anthropic_version: 'bedrock-2023-05-31', anthropic_beta: ['interleaved-thinking-2025-05-14', 'context-1m-2025-08-07'], ...counted, max_tokens: 1025 });
    expect(data).toEqual({ input_tokens: Math.ceil(JSON.stringify(invoked).length / 4) });
    expect(aws.refused).toEqual([]);
  });
});
