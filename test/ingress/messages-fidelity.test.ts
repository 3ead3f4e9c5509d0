/**
 * What a Messages client (the real Anthropic SDK, as Claude Code uses it) sends reaches Bedrock,
 * Gemini and OpenAI-compatible upstreams as faithfully as each can take it, over two turns:
 * thinking blocks come back with their provider's signature and go up again on turn 2, cache
 * markers become Bedrock cachePoints and OpenAI's prompt_cache_key, cache reads and writes are
 * in the usage and the cost, and count_tokens is the provider's own count where it has one.
 *
 * Payloads: the Bedrock reasoning stream and cache-read answer, and Gemini's signed function call,
 * are recorded (test/fixtures/README.md says where from); the other answers are written here.
 */
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEV_KEY, loadFixture, replay, startFakeUpstream, startTestGateway, type FakeUpstream, type Handler, type ScriptedResponse, type TestGateway } from 'switchyard-gateway/kit/testing';
import { configYaml, fixturesOf } from '../helpers/repo.ts';

const OTHER_KEY = 'sk-fidelity-other-key-0123456789';
const BEDROCK_MODEL = 'us.anthropic.claude-sonnet-4-20250514-v1:0';
/** USD per million tokens, the same for every target (the arithmetic below is written out from it). */
const PRICE = { input: 3, cachedInput: 0.3, cacheWrite: 3.75, output: 15 };
const price = `price: { input: ${PRICE.input}, cachedInput: ${PRICE.cachedInput}, cacheWrite: ${PRICE.cacheWrite}, output: ${PRICE.output} }`;
const costOf = (u: { fresh: number; read: number; write: number; output: number }) =>
  Math.round(((u.fresh * PRICE.input + u.read * PRICE.cachedInput + u.write * PRICE.cacheWrite + u.output * PRICE.output) / 1e6) * 1e9) / 1e9;

/** The recorded Claude reasoning on Bedrock (converse-stream-reasoning-claude). */
const BEDROCK_THINKING =
  'The user has greeted me with a simple "Hello". I should respond in a friendly and welcoming manner. This is a straightforward greeting, so I\'ll respond warmly and ask how I can help them today.';

let bedrock: FakeUpstream;
let gemini: FakeUpstream;
let openai: FakeUpstream;
let t: TestGateway;
const client = (apiKey = DEV_KEY) => new Anthropic({ apiKey, baseURL: t.url, maxRetries: 0 });

const SYSTEM = [{ type: 'text' as const, text: 'You write files when asked.', cache_control: { type: 'ephemeral' as const } }];
const WRITE_FILE = {
  name: 'write_file',
  description: 'Write a file',
  input_schema: { type: 'object' as const, properties: { path: { type: 'string' }, content: { type: 'string' } }, required: ['path', 'content'] },
  cache_control: { type: 'ephemeral' as const },
};

/** A handler answering by the path's ending; anything else is a 404 the test would see. */
function byPath(routes: Record<string, Handler>): Handler {
  return (req, i) => {
    const path = req.url.split('?')[0];
    for (const [ending, handler] of Object.entries(routes)) if (path.endsWith(ending)) return handler(req, i);
    return { status: 404, body: { error: { code: 404, message: `no route for ${req.url}` } } };
  };
}

/** Answers the requests that follow in turn: the first with `answers[0]`, and so on (the last repeats). */
function inTurn(...answers: Array<() => ScriptedResponse>): Handler {
  let n = 0;
  return () => answers[Math.min(n++, answers.length - 1)]();
}

const bodiesTo = (upstream: FakeUpstream, ending: string) => upstream.requests.filter((r) => r.url.split('?')[0].endsWith(ending)).map((r) => r.body);

beforeAll(async () => {
  bedrock = await startFakeUpstream(() => ({ status: 500, body: { message: 'no handler yet' } }));
  gemini = await startFakeUpstream(() => ({ status: 500, body: { error: { code: 500, message: 'no handler yet' } } }));
  openai = await startFakeUpstream(() => ({ status: 500, body: { error: { message: 'no handler yet' } } }));
  t = await startTestGateway(
    configYaml({
      keys: `  - { name: dev, key: ${DEV_KEY} }\n  - { name: other, key: ${OTHER_KEY} }`,
      providers: [
        `  aws: { plugin: bedrock, region: us-east-1, endpoint: "${bedrock.url}", accessKeyId: AKIDFIDELITYTEST01, secretAccessKey: fidelity-test-secret-0123456789 }`,
        `  google: { plugin: gemini, baseUrl: "${gemini.url}", apiKey: test-gemini-key }`,
        `  oai: { plugin: openai, baseUrl: "${openai.url}/v1", apiKey: test-openai-key }`,
      ].join('\n'),
      models: [
        `  claude-bedrock: { targets: [{ provider: aws, model: "${BEDROCK_MODEL}", ${price} }] }`,
        `  claude-gemini: { targets: [{ provider: google, model: gemini-2.5-flash, ${price} }] }`,
        `  claude-openai: { targets: [{ provider: oai, model: gpt-5, ${price} }] }`,
      ].join('\n'),
    }),
  );
});
afterAll(async () => {
  await t?.close();
  await Promise.all([bedrock?.close(), gemini?.close(), openai?.close()]);
});

describe('Bedrock (Converse): thinking signatures, cachePoints, cache usage', () => {
  it('turn 1 streams the signed reasoning; turn 2 sends it back with its signature, and reads the cache', async () => {
    const fixtures = fixturesOf('bedrock');
    bedrock.setHandler(
      byPath({
        '/converse-stream': () => replay(loadFixture(fixtures, 'converse-stream-reasoning-claude')),
        '/converse': () => replay(loadFixture(fixtures, 'converse-usage-cache-read')),
      }),
    );
    const request = {
      model: 'claude-bedrock',
      max_tokens: 16_000,
      thinking: { type: 'enabled' as const, budget_tokens: 10_000 },
      system: SYSTEM,
      tools: [WRITE_FILE],
      messages: [{ role: 'user' as const, content: 'Hello' }],
    };
    const first = await client().messages.stream(request).finalMessage();
    expect(first.content[0]).toEqual({ type: 'thinking', thinking: BEDROCK_THINKING, signature: expect.stringMatching(/^Eu0CCkgIBxABGAIqQJDc/) });
    expect(first.content[1]).toEqual({ type: 'text', text: expect.stringContaining('How can I help you today?') });

    const [up1] = bodiesTo(bedrock, '/converse-stream');
    // Cache markers → cachePoints right after the marked system text and the marked tool.
    expect(up1.system).toEqual([{ text: 'You write files when asked.' }, { cachePoint: { type: 'default' } }]);
    expect(up1.toolConfig.tools).toEqual([expect.objectContaining({ toolSpec: expect.objectContaining({ name: 'write_file' }) }), { cachePoint: { type: 'default' } }]);
    // budget 10,000 → effort medium → Claude's budget for medium on Bedrock.
    expect(up1.additionalModelRequestFields).toEqual({ thinking: { type: 'enabled', budget_tokens: 8192 } });

    const { data: second, response } = await client()
      .messages.create({
        ...request,
        messages: [
          { role: 'user', content: 'Hello' },
          { role: 'assistant', content: first.content },
          { role: 'user', content: [{ type: 'text', text: 'What is 20 + 1?', cache_control: { type: 'ephemeral' } }] },
        ],
      })
      .withResponse();
    const [up2] = bodiesTo(bedrock, '/converse');
    expect(up2.messages[1].content[0]).toEqual({ reasoningContent: { reasoningText: { text: BEDROCK_THINKING, signature: (first.content[0] as Anthropic.ThinkingBlock).signature } } });
    expect(up2.messages[2].content.at(-1)).toEqual({ cachePoint: { type: 'default' } });
    // Recorded: inputTokens 2, cacheReadInputTokens 1322, outputTokens 5.
    expect(second.usage).toMatchObject({ input_tokens: 2, cache_read_input_tokens: 1322, cache_creation_input_tokens: 0, output_tokens: 5 });
    expect(Number(response.headers.get('x-switchyard-cost-usd'))).toBe(costOf({ fresh: 2, read: 1322, write: 0, output: 5 }));
  });

  it('cache writes are cache_creation_input_tokens, priced at the write rate', async () => {
    bedrock.setHandler(() => ({
      status: 200,
      body: {
        output: { message: { role: 'assistant', content: [{ text: 'ok' }] } },
        stopReason: 'end_turn',
        usage: { inputTokens: 10, outputTokens: 2, cacheWriteInputTokens: 1500, cacheReadInputTokens: 0 },
      },
    }));
    const { data, response } = await client()
      .messages.create({ model: 'claude-bedrock', max_tokens: 100, system: SYSTEM, messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    expect(data.usage).toMatchObject({ input_tokens: 10, cache_creation_input_tokens: 1500, cache_read_input_tokens: 0, output_tokens: 2 });
    expect(Number(response.headers.get('x-switchyard-cost-usd'))).toBe(costOf({ fresh: 10, read: 0, write: 1500, output: 2 }));
  });
});

describe('Gemini: thought signatures round-trip, cached tokens in the usage', () => {
  const answer = (parts: unknown[], usage: Record<string, number>) => ({
    candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
    usageMetadata: usage,
    modelVersion: 'gemini-2.5-flash',
  });

  it("a signed function call: the signature rides a thinking block and goes back on the call's part on turn 2", async () => {
    const recorded = loadFixture(fixturesOf('gemini'), 'generate-function-call-thought-signature');
    const signature = (recorded.json as { candidates: Array<{ content: { parts: Array<{ thoughtSignature: string }> } }> }).candidates[0].content.parts[0].thoughtSignature;
    gemini.setHandler(
      inTurn(
        () => replay(recorded),
        () => ({ status: 200, body: answer([{ text: 'helloworld' }], { promptTokenCount: 900, cachedContentTokenCount: 600, candidatesTokenCount: 3 }) }),
      ),
    );
    const tool = { name: 'concatStringFunction', input_schema: { type: 'object' as const, properties: { firstString: { type: 'string' }, secondString: { type: 'string' } } } };
    const user = { role: 'user' as const, content: 'Join hello and world' };
    const first = await client().messages.create({ model: 'claude-gemini', max_tokens: 1000, tools: [tool], messages: [user] });
    expect(first.content).toEqual([
      { type: 'thinking', thinking: '', signature: `gemini:call:${signature}` },
      { type: 'tool_use', id: expect.any(String), name: 'concatStringFunction', input: { firstString: 'hello', secondString: 'world' } },
    ]);
    const call = first.content[1] as Anthropic.ToolUseBlock;

    const { data: second, response } = await client()
      .messages.create({
        model: 'claude-gemini',
        max_tokens: 1000,
        tools: [tool],
        messages: [user, { role: 'assistant', content: first.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: 'helloworld' }] }],
      })
      .withResponse();
    const up2 = gemini.requests.at(-1)!.body;
    expect(up2.contents[1]).toEqual({ role: 'model', parts: [{ functionCall: { name: 'concatStringFunction', args: { firstString: 'hello', secondString: 'world' } }, thoughtSignature: signature }] });
    expect(JSON.stringify(up2)).not.toContain('gemini:call:');
    // Gemini's promptTokenCount includes the cached tokens.
    expect(second.usage).toMatchObject({ input_tokens: 300, cache_read_input_tokens: 600, cache_creation_input_tokens: 0, output_tokens: 3 });
    expect(Number(response.headers.get('x-switchyard-cost-usd'))).toBe(costOf({ fresh: 300, read: 600, write: 0, output: 3 }));
  });

  it('streamed: thought text and its signature make one thinking block, sent back as a thought part', async () => {
    const sse = (o: unknown) => `data: ${JSON.stringify(o)}\r\n\r\n`;
    gemini.setHandler(
      inTurn(
        () => ({
          status: 200,
          headers: { 'content-type': 'text/event-stream' },
          chunks: [
            sse({ candidates: [{ content: { role: 'model', parts: [{ text: 'Adding two small numbers.', thought: true }] }, index: 0 }] }),
            sse({ candidates: [{ content: { role: 'model', parts: [{ text: '', thought: true, thoughtSignature: 'c2lnLXRob3VnaHQ=' }] }, index: 0 }] }),
            sse(answer([{ text: '21' }], { promptTokenCount: 12, candidatesTokenCount: 1, thoughtsTokenCount: 6 })),
          ],
        }),
        () => ({ status: 200, body: answer([{ text: 'ok' }], { promptTokenCount: 30, candidatesTokenCount: 1 }) }),
      ),
    );
    const request = { model: 'claude-gemini', max_tokens: 1000, thinking: { type: 'enabled' as const, budget_tokens: 2048 }, messages: [{ role: 'user' as const, content: 'What is 20 + 1?' }] };
    const first = await client().messages.stream(request).finalMessage();
    expect(first.content).toEqual([
      { type: 'thinking', thinking: 'Adding two small numbers.', signature: 'gemini:thought:c2lnLXRob3VnaHQ=' },
      { type: 'text', text: '21' },
    ]);
    await client().messages.create({ ...request, messages: [...request.messages, { role: 'assistant', content: first.content }, { role: 'user', content: 'And 20 + 2?' }] });
    expect(gemini.requests.at(-1)!.body.contents[1]).toEqual({
      role: 'model',
      parts: [{ text: 'Adding two small numbers.', thought: true, thoughtSignature: 'c2lnLXRob3VnaHQ=' }, { text: '21' }],
    });
  });

  it("Claude's signatures never reach Gemini, nor do cache markers: both reported dropped, refused when strict", async () => {
    gemini.setHandler(() => ({ status: 200, body: answer([{ text: 'ok' }], { promptTokenCount: 30, candidatesTokenCount: 1 }) }));
    const request = {
      model: 'claude-gemini',
      max_tokens: 100,
      system: SYSTEM,
      messages: [
        { role: 'user' as const, content: 'Hello' },
        {
          role: 'assistant' as const,
          content: [
            { type: 'thinking' as const, thinking: 'Claude thought this.', signature: 'EqQBCkYIAxgCIkB' },
            { type: 'text' as const, text: 'Hi.' },
          ],
        },
        { role: 'user' as const, content: 'Again' },
      ],
    };
    const { response } = await client().messages.create(request).withResponse();
    const up = gemini.requests.at(-1)!.body;
    expect(up.contents[1]).toEqual({ role: 'model', parts: [{ text: 'Hi.' }] });
    expect(up.systemInstruction).toEqual({ role: 'user', parts: [{ text: 'You write files when asked.' }] });
    expect(response.headers.get('x-switchyard-dropped')).toBe('cache_control (prompt-cache markers), messages (thinking blocks)');

    const before = gemini.requests.length;
    const refused = await client()
      .messages.create(request, { headers: { 'x-switchyard-strict': 'true' } })
      .catch((e: unknown) => e);
    expect((refused as InstanceType<typeof Anthropic.APIError>).status).toBe(400);
    expect((refused as InstanceType<typeof Anthropic.APIError>).message).toMatch(/'cache_control' \(prompt-cache markers\).*implicit caching/);
    expect(gemini.requests.length).toBe(before);
  });
});

describe('OpenAI-compatible: reasoning text only, cache markers as prompt_cache_key', () => {
  const completion = (message: Record<string, unknown>, usage: Record<string, unknown>) => ({
    id: 'chatcmpl-fid',
    object: 'chat.completion',
    created: 1,
    model: 'gpt-5',
    choices: [{ index: 0, message: { role: 'assistant', refusal: null, ...message }, finish_reason: 'stop' }],
    usage,
  });

  it('turn 2 sends no thinking and no markers, the same prompt_cache_key as turn 1; cached tokens are cache reads', async () => {
    openai.setHandler(
      inTurn(
        () => ({ status: 200, body: completion({ content: 'Hi!', reasoning_content: 'A greeting.' }, { prompt_tokens: 2000, completion_tokens: 10, total_tokens: 2010 }) }),
        () => ({ status: 200, body: completion({ content: 'Sure.' }, { prompt_tokens: 2100, completion_tokens: 4, total_tokens: 2104, prompt_tokens_details: { cached_tokens: 1920 } }) }),
      ),
    );
    const request = { model: 'claude-openai', max_tokens: 1000, system: SYSTEM, tools: [WRITE_FILE], messages: [{ role: 'user' as const, content: 'Hello' }] };
    const first = await client().messages.create(request);
    // No provider signature to give: the reasoning text with an empty one.
    expect(first.content).toEqual([
      { type: 'thinking', thinking: 'A greeting.', signature: '' },
      { type: 'text', text: 'Hi!' },
    ]);
    const { data: second, response } = await client()
      .messages.create({
        ...request,
        messages: [...request.messages, { role: 'assistant', content: first.content }, { role: 'user', content: [{ type: 'text', text: 'Write it', cache_control: { type: 'ephemeral' } }] }],
      })
      .withResponse();
    const [up1, up2] = openai.requests.slice(-2).map((r) => r.body);
    // The markers went as prompt_cache_key; the thinking of turn 1 had nowhere to go.
    expect(response.headers.get('x-switchyard-dropped')).toBe('messages (thinking blocks)');
    expect(up1.prompt_cache_key).toMatch(/^swy-[0-9a-f]{40}$/);
    expect(up2.prompt_cache_key).toBe(up1.prompt_cache_key);
    for (const up of [up1, up2]) {
      expect(JSON.stringify(up)).not.toMatch(/cache_control|thinking_blocks/);
      expect(up.tools[0]).toEqual({ type: 'function', function: expect.objectContaining({ name: 'write_file' }) });
    }
    expect(up2.messages[2]).toEqual({ role: 'assistant', content: 'Hi!' });
    expect(second.usage).toMatchObject({ input_tokens: 180, cache_read_input_tokens: 1920, cache_creation_input_tokens: 0, output_tokens: 4 });
    expect(Number(response.headers.get('x-switchyard-cost-usd'))).toBe(costOf({ fresh: 180, read: 1920, write: 0, output: 4 }));
  });

  it("another caller's key gives another prompt_cache_key for the same prefix; no markers, none", async () => {
    openai.setHandler(() => ({ status: 200, body: completion({ content: 'ok' }, { prompt_tokens: 10, completion_tokens: 1, total_tokens: 11 }) }));
    const request = { model: 'claude-openai', max_tokens: 100, system: SYSTEM, messages: [{ role: 'user' as const, content: 'Hello' }] };
    await client().messages.create(request);
    await client(OTHER_KEY).messages.create(request);
    await client().messages.create({ ...request, system: 'No markers here.' });
    const [mine, theirs, unmarked] = openai.requests.slice(-3).map((r) => r.body);
    expect(mine.prompt_cache_key).toMatch(/^swy-/);
    expect(theirs.prompt_cache_key).toMatch(/^swy-/);
    expect(theirs.prompt_cache_key).not.toBe(mine.prompt_cache_key);
    expect(unmarked).not.toHaveProperty('prompt_cache_key');
  });
});

describe('count_tokens: the provider counts where it can', () => {
  const body = { system: 'Be brief.', tools: [WRITE_FILE], messages: [{ role: 'user' as const, content: 'How many tokens is this?' }] };

  it('Gemini: models/{m}:countTokens of the whole generateContent request, exact', async () => {
    gemini.setHandler(byPath({ ':countTokens': () => ({ status: 200, body: { totalTokens: 42, promptTokensDetails: [{ modality: 'TEXT', tokenCount: 42 }] } }) }));
    const { data, response } = await client()
      .messages.countTokens({ model: 'claude-gemini', ...body })
      .withResponse();
    expect(data).toEqual({ input_tokens: 42 });
    expect(response.headers.get('x-switchyard-token-count')).toBe('exact');
    const up = gemini.requests.at(-1)!;
    expect(up.url).toBe('/v1beta/models/gemini-2.5-flash:countTokens');
    expect(up.body.generateContentRequest).toMatchObject({
      model: 'models/gemini-2.5-flash',
      contents: [{ role: 'user', parts: [{ text: 'How many tokens is this?' }] }],
      systemInstruction: { parts: [{ text: 'Be brief.' }] },
      tools: [{ functionDeclarations: [expect.objectContaining({ name: 'write_file' })] }],
    });
  });

  it('Bedrock: CountTokens of the Converse request, exact', async () => {
    bedrock.setHandler(byPath({ '/count-tokens': () => ({ status: 200, body: { inputTokens: 37 } }) }));
    const { data, response } = await client()
      .messages.countTokens({ model: 'claude-bedrock', ...body })
      .withResponse();
    expect(data).toEqual({ input_tokens: 37 });
    expect(response.headers.get('x-switchyard-token-count')).toBe('exact');
    const up = bedrock.requests.at(-1)!;
    expect(up.url).toBe(`/model/${encodeURIComponent(BEDROCK_MODEL)}/count-tokens`);
    expect(up.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 /);
    expect(up.body.input.converse).toMatchObject({ system: [{ text: 'Be brief.' }], messages: [{ role: 'user', content: [{ text: 'How many tokens is this?' }] }] });
    expect(Object.keys(up.body.input.converse).sort()).toEqual(['messages', 'system', 'toolConfig']);
  });

  it('a provider that cannot count (OpenAI-compatible chat): the estimate, no upstream call', async () => {
    const before = openai.requests.length;
    const { data, response } = await client()
      .messages.countTokens({ model: 'claude-openai', ...body })
      .withResponse();
    expect(data.input_tokens).toBeGreaterThan(10);
    expect(response.headers.get('x-switchyard-token-count')).toBe('estimate');
    expect(openai.requests.length).toBe(before);
  });

  it("the provider's counting failure is the provider's error, not an estimate", async () => {
    bedrock.setHandler(() => ({ status: 400, headers: { 'x-amzn-errortype': 'ValidationException' }, body: { message: 'The provided model does not support counting tokens.' } }));
    const error = await client()
      .messages.countTokens({ model: 'claude-bedrock', ...body })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    expect((error as InstanceType<typeof Anthropic.APIError>).status).toBe(400);
    expect((error as InstanceType<typeof Anthropic.APIError>).message).toMatch(/does not support counting tokens/);
  });
});
