/**
 * The translation chain end to end, provider by provider: an OpenAI Responses client
 * (`responses.create`, `responses.stream`, tools with a function_call_output follow-up,
 * `text.format` json_schema) served by the openai, anthropic, gemini and bedrock plugins, and an
 * Anthropic Messages client (`messages.create`, `messages.stream`, text and tools) served by an
 * OpenAI-compatible upstream and by gemini. Each fake upstream replays recorded answers (see
 * test/fixtures/README.md); the point is that client protocol → chat → native request and
 * native answer → chat → client protocol hold for every pair, and every Responses object and
 * event validates against OpenAI's schema.
 */
import { describe, expect, it } from 'vitest';
import type OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import {
  DEV_KEY,
  expectValid,
  fakeUpstream,
  loadFixture,
  replay,
  useTestGateway,
  type FakeUpstream,
  type Fixture,
  type Handler,
  type RecordedRequest,
  type ScriptedResponse,
} from 'switchyard-gateway/kit/testing';
import { fixturesOf } from '../helpers/repo.ts';
import { signedByAws } from '../helpers/sigv4.ts';

type Provider = 'openai' | 'anthropic' | 'gemini' | 'bedrock';
const fixture = (provider: Provider, name: string) => loadFixture(fixturesOf(provider), name);

const AWS = { accessKeyId: 'AKIDINGRESSTEST0001', secretAccessKey: 'ingress-test-secret-0123456789' };

/** Bedrock's fake answers only signed requests; anything else gets the 403 AWS sends for a bad signature. */
const bedrockSigned =
  (respond: () => ScriptedResponse): Handler =>
  async (req) =>
    (await signedByAws(req, AWS))
      ? respond()
      : {
          status: 403,
          headers: { 'content-type': 'application/json', 'x-amzn-errortype': 'InvalidSignatureException:http://internal.amazon.com/coral/com.amazon.coral.service/' },
          body: { message: 'The request signature we calculated does not match the signature you provided.' },
        };

/** A recorded JSON answer with its text replaced (for providers without a structured-output recording). */
function withText(provider: Provider, name: string, set: (json: Fixture['json'], text: string) => void, text: string): ScriptedResponse {
  const f = fixture(provider, name);
  const json = structuredClone(f.json);
  set(json, text);
  return { status: f.status, headers: f.headers, body: json };
}

const upstreams: Record<Provider, FakeUpstream> = {
  openai: fakeUpstream(() => replay(fixture('openai', 'chat-basic'))),
  anthropic: fakeUpstream(() => replay(fixture('anthropic', 'messages-system-prompt'))),
  gemini: fakeUpstream(() => replay(fixture('gemini', 'generate-multi-turn'))),
  bedrock: fakeUpstream(bedrockSigned(() => replay(fixture('bedrock', 'converse-basic-system')))),
};

const t = useTestGateway(
  () => `keys:
  - { name: dev, key: ${DEV_KEY} }
providers:
  oai: { plugin: openai, baseUrl: "${upstreams.openai.url}/v1", apiKey: test-openai-key }
  claude: { plugin: anthropic, baseUrl: "${upstreams.anthropic.url}", apiKey: test-anthropic-key }
  g: { plugin: gemini, baseUrl: "${upstreams.gemini.url}", apiKey: test-gemini-key }
  aws: { plugin: bedrock, region: us-east-1, endpoint: "${upstreams.bedrock.url}", accessKeyId: ${AWS.accessKeyId}, secretAccessKey: ${AWS.secretAccessKey} }
models:
  gpt: { retry: { attempts: 1 }, targets: [{ provider: oai, model: gpt-4o }] }
  claude: { retry: { attempts: 1 }, targets: [{ provider: claude, model: claude-opus-4-8 }] }
  flash: { retry: { attempts: 1 }, targets: [{ provider: g, model: gemini-2.0-flash }] }
  nova: { retry: { attempts: 1 }, targets: [{ provider: aws, model: "us.amazon.nova-micro-v1:0" }] }
`,
  { upstreams: Object.values(upstreams) },
);

/** A Responses function tool. */
const fn = (name: string, parameters: Record<string, unknown>): OpenAI.Responses.FunctionTool => ({ type: 'function', name, description: `${name} (from the recording)`, strict: false, parameters });

/** The `text.format` every provider is asked for, and the answer that satisfies it. */
const CITY_FORMAT = {
  format: { type: 'json_schema' as const, name: 'city', strict: true, schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false } },
};
const CITY_JSON = '{"city":"Paris"}';

interface ResponsesCase {
  provider: Provider;
  alias: string;
  text: { fixture: string; contains: string };
  stream: { fixture: string; contains: string };
  tool: { fixture: string; definition: OpenAI.Responses.FunctionTool; arguments: Record<string, unknown>; followUp: string; followUpContains: string };
  /** How the provider's native request carries the tool result back. */
  expectToolResult(body: RecordedRequest['body'], callId: string, output: string): void;
  /** The structured answer (recorded where one exists) and JSON it must parse to. */
  structured: { respond: () => ScriptedResponse; json: unknown };
  /** How the provider's native request asks for the schema. */
  expectFormat(body: RecordedRequest['body']): void;
}

const SCHEMA = CITY_FORMAT.format.schema;

const RESPONSES_CASES: ResponsesCase[] = [
  {
    provider: 'openai',
    alias: 'gpt',
    text: { fixture: 'chat-basic', contains: 'The capital of France is Paris.' },
    stream: { fixture: 'stream-tool-result-followup', contains: 'The capital of the UK is London.' },
    tool: {
      fixture: 'chat-tool-call',
      definition: fn('get_user_country', { type: 'object', properties: {}, additionalProperties: false }),
      arguments: {},
      // The recorded follow-up calls the next tool (final_result): a function_call again.
      followUp: 'chat-tool-result-followup',
      followUpContains: '',
    },
    expectToolResult(body, callId, output) {
      expect(body.messages.at(-1)).toEqual({ role: 'tool', tool_call_id: callId, content: output });
      expect(body.messages.at(-2)).toMatchObject({ role: 'assistant', tool_calls: [{ id: callId, type: 'function', function: { name: 'get_user_country', arguments: '{}' } }] });
    },
    structured: { respond: () => replay(fixture('openai', 'chat-structured-output')), json: { city: 'San Francisco', units: 'c' } },
    expectFormat(body) {
      expect(body.response_format).toEqual({ type: 'json_schema', json_schema: { name: 'city', strict: true, schema: SCHEMA } });
    },
  },
  {
    provider: 'anthropic',
    alias: 'claude',
    text: { fixture: 'messages-system-prompt', contains: 'The capital of France is Paris.' },
    stream: { fixture: 'stream-basic', contains: 'Hello there!' },
    tool: {
      fixture: 'messages-tool-use',
      definition: fn('test_tool', { type: 'object', properties: { value: { type: 'string' } }, required: ['value'] }),
      arguments: { value: 'test' },
      followUp: 'messages-parallel-tool-results-followup',
      followUpContains: "I've successfully used the test_tool",
    },
    expectToolResult(body, callId, output) {
      expect(body.messages.at(-2)).toMatchObject({ role: 'assistant', content: expect.arrayContaining([{ type: 'tool_use', id: callId, name: 'test_tool', input: { value: 'test' } }]) });
      const last = body.messages.at(-1);
      expect(last.role).toBe('user');
      expect(JSON.stringify(last.content)).toContain(JSON.stringify(output).slice(1, -1));
      expect(last.content).toEqual(expect.arrayContaining([expect.objectContaining({ type: 'tool_result', tool_use_id: callId })]));
    },
    // No structured-output recording: the recorded text answer carrying JSON.
    structured: {
      respond: () =>
        withText(
          'anthropic',
          'messages-system-prompt',
          (j, text) => {
            j.content[0].text = text;
          },
          CITY_JSON,
        ),
      json: { city: 'Paris' },
    },
    expectFormat(body) {
      expect(body.output_config).toEqual({ format: { type: 'json_schema', schema: SCHEMA } });
    },
  },
  {
    provider: 'gemini',
    alias: 'flash',
    text: { fixture: 'generate-multi-turn', contains: "The Clockmaker's Silence" },
    stream: { fixture: 'stream-basic', contains: 'Rayleigh scattering' },
    tool: {
      fixture: 'generate-function-call',
      definition: fn('customDivide', { type: 'object', properties: { numerator: { type: 'number' }, denominator: { type: 'number' } } }),
      arguments: { numerator: 10, denominator: 2 },
      followUp: 'generate-function-response-followup',
      followUpContains: 'the result is 42',
    },
    expectToolResult(body) {
      // Gemini has no call ids: the gateway names the function the result answers.
      expect(body.contents.at(-2)).toMatchObject({ role: 'model', parts: [{ functionCall: { name: 'customDivide', args: { numerator: 10, denominator: 2 } } }] });
      expect(body.contents.at(-1)).toMatchObject({ role: 'user', parts: [{ functionResponse: { name: 'customDivide' } }] });
    },
    structured: {
      respond: () =>
        withText(
          'gemini',
          'generate-multi-turn',
          (j, text) => {
            j.candidates[0].content.parts[0].text = text;
          },
          CITY_JSON,
        ),
      json: { city: 'Paris' },
    },
    expectFormat(body) {
      expect(body.generationConfig).toMatchObject({ responseMimeType: 'application/json', responseJsonSchema: SCHEMA });
    },
  },
  {
    provider: 'bedrock',
    alias: 'nova',
    text: { fixture: 'converse-basic-system', contains: 'How can I assist you today?' },
    stream: { fixture: 'converse-stream-basic', contains: 'The capital of France is Paris.' },
    tool: {
      fixture: 'converse-tool-use',
      definition: fn('get_capital', { type: 'object', properties: { country: { type: 'string' } }, required: ['country'] }),
      arguments: { country: 'France' },
      followUp: 'converse-tool-result-error-followup',
      followUpContains: 'The capital of France is Paris.',
    },
    expectToolResult(body, callId, output) {
      expect(body.messages.at(-2)).toMatchObject({ role: 'assistant', content: expect.arrayContaining([{ toolUse: { toolUseId: callId, name: 'get_capital', input: { country: 'France' } } }]) });
      expect(body.messages.at(-1)).toMatchObject({ role: 'user', content: [{ toolResult: { toolUseId: callId, content: [{ text: output }] } }] });
    },
    structured: {
      respond: () =>
        withText(
          'bedrock',
          'converse-basic-system',
          (j, text) => {
            j.output.message.content[0].text = text;
          },
          CITY_JSON,
        ),
      json: { city: 'Paris' },
    },
    expectFormat(body) {
      expect(body.outputConfig).toEqual({ textFormat: { type: 'json_schema', structure: { jsonSchema: { schema: JSON.stringify(SCHEMA), name: 'city' } } } });
    },
  },
];

/** The fake answers with `respond` (Bedrock's only when the request is signed). */
function answerWith(provider: Provider, respond: () => ScriptedResponse): void {
  upstreams[provider].setHandler(provider === 'bedrock' ? bedrockSigned(respond) : () => respond());
}

describe.each(RESPONSES_CASES)('POST /v1/responses served by $provider', (c) => {
  const sent = () => upstreams[c.provider].requests.at(-1)!;

  it('responses.create: a schema-valid response with the recorded text', async () => {
    answerWith(c.provider, () => replay(fixture(c.provider, c.text.fixture)));
    const r = await t.client().responses.create({ model: c.alias, instructions: 'Be brief.', input: 'What is the capital of France?' });
    expectValid('Response', r);
    expect(r.status).toBe('completed');
    expect(r.output_text).toContain(c.text.contains);
    expect(r.usage!.total_tokens).toBe(r.usage!.input_tokens + r.usage!.output_tokens);
    expect(upstreams[c.provider].requests).toHaveLength(1);
  });

  it('responses.stream: every event schema-valid, in order, assembled by the SDK', async () => {
    answerWith(c.provider, () => replay(fixture(c.provider, c.stream.fixture)));
    const stream = t.client().responses.stream({ model: c.alias, input: 'Hello' });
    const types: string[] = [];
    let last = -1;
    stream.on('event', (e) => {
      expectValid('ResponseStreamEvent', e);
      expect(e.sequence_number).toBeGreaterThan(last);
      last = e.sequence_number;
      types.push(e.type);
    });
    const final = await stream.finalResponse();
    expectValid('Response', final);
    expect(types[0]).toBe('response.created');
    expect(types).toContain('response.output_text.delta');
    expect(types.at(-1)).toBe('response.completed');
    expect(final.output_text).toContain(c.stream.contains);
  });

  it('tools: a function_call item, then the function_call_output goes back natively and the follow-up answers', async () => {
    answerWith(c.provider, () => replay(fixture(c.provider, c.tool.fixture)));
    const input = 'Use the tool, then answer.';
    const first = await t.client().responses.create({ model: c.alias, input, tools: [c.tool.definition] });
    expectValid('Response', first);
    const call = first.output.find((o): o is OpenAI.Responses.ResponseFunctionToolCall => o.type === 'function_call');
    expect(call).toMatchObject({ type: 'function_call', name: c.tool.definition.name, status: 'completed' });
    expect(JSON.parse(call!.arguments)).toEqual(c.tool.arguments);
    expect(call!.call_id).toBeTruthy();

    answerWith(c.provider, () => replay(fixture(c.provider, c.tool.followUp)));
    const output = 'The country is not supported.';
    const second = await t.client().responses.create({
      model: c.alias,
      tools: [c.tool.definition],
      input: [{ role: 'user', content: input }, call!, { type: 'function_call_output', call_id: call!.call_id, output }],
    });
    expectValid('Response', second);
    c.expectToolResult(sent().body, call!.call_id, output);
    if (c.tool.followUpContains) expect(second.output_text).toContain(c.tool.followUpContains);
    else expect(second.output.some((o) => o.type === 'function_call')).toBe(true);
  });

  it('text.format json_schema: asked for natively, answered as output_text that parses', async () => {
    answerWith(c.provider, c.structured.respond);
    const r = await t.client().responses.create({ model: c.alias, input: 'Which city? Answer as JSON.', text: CITY_FORMAT });
    expectValid('Response', r);
    c.expectFormat(sent().body);
    expect(JSON.parse(r.output_text)).toEqual(c.structured.json);
    expect(r.text?.format).toMatchObject({ type: 'json_schema', name: 'city' });
  });
});

interface MessagesCase {
  provider: 'openai' | 'gemini';
  alias: string;
  text: { fixture: string; contains: string };
  textStream: { fixture: string; contains: string };
  tool: { fixture: string; name: string; input: Record<string, unknown> };
  toolStream: { fixture: string; name: string; input: Record<string, unknown> };
}

const MESSAGES_CASES: MessagesCase[] = [
  {
    provider: 'openai',
    alias: 'gpt',
    text: { fixture: 'chat-basic', contains: 'The capital of France is Paris.' },
    textStream: { fixture: 'stream-tool-result-followup', contains: 'The capital of the UK is London.' },
    tool: { fixture: 'chat-tool-call', name: 'get_user_country', input: {} },
    toolStream: { fixture: 'stream-tool-call', name: 'get_capital', input: { country: 'UK' } },
  },
  {
    provider: 'gemini',
    alias: 'flash',
    text: { fixture: 'generate-multi-turn', contains: "The Clockmaker's Silence" },
    textStream: { fixture: 'stream-basic', contains: 'Rayleigh scattering' },
    tool: { fixture: 'generate-function-call', name: 'customDivide', input: { numerator: 10, denominator: 2 } },
    toolStream: { fixture: 'stream-function-call', name: 'customDivide', input: { numerator: 100, denominator: 2 } },
  },
];

/** An Anthropic tool whose name the recorded answer calls. */
const anthropicTool = (name: string): Anthropic.Tool => ({ name, description: `${name} (from the recording)`, input_schema: { type: 'object', properties: {} } });

describe.each(MESSAGES_CASES)('POST /v1/messages served by $provider', (c) => {
  const client = () => new Anthropic({ apiKey: DEV_KEY, baseURL: t.url, maxRetries: 0 });
  const ask = { model: c.alias, max_tokens: 256, messages: [{ role: 'user' as const, content: 'Hello' }] };

  it('messages.create: text, and a tool_use block with the recorded arguments', async () => {
    answerWith(c.provider, () => replay(fixture(c.provider, c.text.fixture)));
    const m = await client().messages.create(ask);
    expect(m).toMatchObject({ type: 'message', role: 'assistant', stop_reason: 'end_turn' });
    expect(m.content[0]).toMatchObject({ type: 'text', text: expect.stringContaining(c.text.contains) });
    expect(m.usage.output_tokens).toBeGreaterThan(0);

    answerWith(c.provider, () => replay(fixture(c.provider, c.tool.fixture)));
    const tool = await client().messages.create({ ...ask, tools: [anthropicTool(c.tool.name)] });
    expect(tool.stop_reason).toBe('tool_use');
    expect(tool.content.find((b) => b.type === 'tool_use')).toMatchObject({ type: 'tool_use', name: c.tool.name, input: c.tool.input, id: expect.any(String) });
  });

  it('messages.stream: text and tool use, assembled by the SDK from Anthropic events', async () => {
    answerWith(c.provider, () => replay(fixture(c.provider, c.textStream.fixture)));
    const events: string[] = [];
    const stream = client().messages.stream(ask);
    stream.on('streamEvent', (e) => events.push(e.type));
    const message = await stream.finalMessage();
    expect(events[0]).toBe('message_start');
    expect(events).toContain('content_block_delta');
    expect(events.at(-1)).toBe('message_stop');
    expect(message.stop_reason).toBe('end_turn');
    expect(message.content.map((b) => (b.type === 'text' ? b.text : '')).join('')).toContain(c.textStream.contains);

    answerWith(c.provider, () => replay(fixture(c.provider, c.toolStream.fixture)));
    const tools = await client()
      .messages.stream({ ...ask, tools: [anthropicTool(c.toolStream.name)] })
      .finalMessage();
    expect(tools.stop_reason).toBe('tool_use');
    expect(tools.content.find((b) => b.type === 'tool_use')).toMatchObject({ type: 'tool_use', name: c.toolStream.name, input: c.toolStream.input });
  });
});
