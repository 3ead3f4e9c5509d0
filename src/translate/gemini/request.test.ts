/** OpenAI request → exact Gemini generateContent body, checked against recorded requests where they fit. */
import { describe, expect, it, vi } from 'vitest';
import type { ChatCompletionRequest } from '../../openai-types.ts';
import type { ProviderCall } from '../../plugin-api.ts';
import { GatewayError } from '../../errors.ts';
import { applyCapabilities } from '../../providers/capabilities.ts';
import { buildGeminiRequest, GEMINI_CAPABILITIES, type GeminiRequestSettings } from './request.ts';
import { SKIP_SIGNATURE } from './contents.ts';
import { callFactory, loadFixture } from 'switchyard-gateway/kit/testing';

/** This provider's recorded payloads. */
const FIXTURES = new URL('../../../test/fixtures/gemini/', import.meta.url);

/** A recorded request body. Google's SDKs always send `generationConfig`, empty or not; we leave an empty one out. */
// biome-ignore lint/suspicious/noExplicitAny: a recorded JSON body, whose fields the tests read as they find them
function recorded(name: string): Record<string, any> {
  const { generationConfig, ...rest } = loadFixture(FIXTURES, name).request;
  return Object.keys(generationConfig ?? {}).length ? { ...rest, generationConfig } : rest;
}

const rawCallOf = callFactory({ provider: 'g', model: 'gemini-2.0-flash' });
/** A call as the core hands it over: the plugin's declared capabilities applied first. */
const callOf: typeof rawCallOf = (request, extra) => {
  const call = rawCallOf(request, extra);
  return { ...call, request: applyCapabilities(call, GEMINI_CAPABILITIES) };
};

const build = (request: Partial<ChatCompletionRequest>, extra: Partial<ProviderCall> = {}, settings: GeminiRequestSettings = {}) => buildGeminiRequest(callOf(request, extra), settings);

function rejection(request: Partial<ChatCompletionRequest>, extra: Partial<ProviderCall> = {}): GatewayError {
  try {
    build(request, extra);
  } catch (err) {
    return err as GatewayError;
  }
  throw new Error('expected the request to be rejected');
}

const user = (content: string) => ({ role: 'user' as const, content });
const DIVIDE = {
  type: 'function' as const,
  function: { name: 'customDivide', description: 'Custom divide function', parameters: { properties: { denominator: { type: 'number' }, numerator: { type: 'number' } }, type: 'object' } },
};

describe('recorded requests, key for key', () => {
  it('system instruction', () => {
    expect(build({ messages: [{ role: 'system', content: 'I say high you say low' }, user('high')] })).toEqual(recorded('generate-system-instruction'));
  });

  it('multi-turn: user, model, user', () => {
    const fixture = recorded('generate-multi-turn');
    const [first, answer, second] = fixture.contents.map((c: { parts: Array<{ text: string }> }) => c.parts[0].text);
    expect(build({ messages: [user(first), { role: 'assistant', content: answer }, user(second)] })).toEqual(fixture);
  });

  it('an image as a base64 data URL → inlineData, after the text, with a system instruction', () => {
    const fixture = recorded('image-input-base64');
    const { mimeType, data } = fixture.contents[0].parts[1].inlineData;
    const body = build({
      messages: [
        { role: 'system', content: 'You are a helpful chatbot.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this vegetable?' },
            { type: 'image_url', image_url: { url: `data:${mimeType};base64,${data}` } },
          ],
        },
      ],
    });
    expect(body).toEqual(fixture);
  });

  it('tools with tool_choice auto → functionDeclarations (parametersJsonSchema) and mode AUTO', () => {
    expect(build({ messages: [user('Divide 10 by 2 using the customDivide function')], tools: [DIVIDE], tool_choice: 'auto' })).toEqual(recorded('generate-function-call'));
  });

  it('a tool result → a functionResponse part named after the call it answers', () => {
    const body = build({
      messages: [
        user('Divide 10 by 2 using the customDivide function'),
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'customDivide', arguments: '{"denominator":2,"numerator":10}' } }] },
        { role: 'tool', tool_call_id: 'call_1', content: '{"output": 42}' },
      ],
      tools: [DIVIDE],
      tool_choice: 'auto',
    });
    expect(body).toEqual(recorded('generate-function-response-followup'));
  });

  it('a named tool_choice → mode ANY with allowedFunctionNames', () => {
    const fixture = recorded('generate-function-call-thought-signature');
    const declaration = fixture.tools[0].functionDeclarations[0];
    const body = build({
      messages: [user('put word: hello and word: world into a string')],
      tools: [{ type: 'function', function: { name: declaration.name, description: declaration.description, parameters: declaration.parametersJsonSchema } }],
      tool_choice: { type: 'function', function: { name: 'concatStringFunction' } },
    });
    expect(body).toEqual(fixture);
  });

  it('streaming requests carry the same body (the method is in the path)', () => {
    expect(build({ stream: true, messages: [user('why is the sky blue?')] })).toEqual(recorded('stream-basic'));
    expect(build({ stream: true, temperature: 0, messages: [{ role: 'system', content: 'You are a helpful chatbot.' }, user('What is the capital of France?')] })).toEqual(
      recorded('stream-wire-exact'),
    );
  });

  it("thinking settings through Google's extension block: a budget, and thought summaries", () => {
    const budget = recorded('generate-basic-max-tokens');
    delete budget.generationConfig.candidateCount; // n: 1 is the default: left out
    expect(build({ messages: [user('why is the sky blue?')], max_tokens: 200, n: 1, extra_body: { google: { thinking_config: { thinking_budget: 50 } } } }, { model: 'gemini-2.5-flash' })).toEqual(
      budget,
    );
    const thoughts = recorded('generate-thinking-thought-part');
    delete thoughts.generationConfig.candidateCount;
    expect(build({ messages: [user('What is the sum of natural numbers from 1 to 100?')], max_completion_tokens: 20, google: { thinking_config: { include_thoughts: true } } })).toEqual(thoughts);
  });
});

describe('parameters → generationConfig', () => {
  it('every sampling parameter, max_completion_tokens over max_tokens', () => {
    const body = build({ temperature: 0.3, top_p: 0.8, top_k: 40, max_tokens: 10, max_completion_tokens: 64, stop: ['END', ''], seed: 7, n: 2, presence_penalty: 0.1, frequency_penalty: -0.2 });
    expect(body.generationConfig).toEqual({
      temperature: 0.3,
      topP: 0.8,
      topK: 40,
      maxOutputTokens: 64,
      stopSequences: ['END'],
      seed: 7,
      candidateCount: 2,
      presencePenalty: 0.1,
      frequencyPenalty: -0.2,
    });
    expect(build({ stop: 'STOP' }).generationConfig).toEqual({ stopSequences: ['STOP'] });
    expect(build({ stop: '' })).not.toHaveProperty('generationConfig');
  });

  it('response_format: json_schema → responseJsonSchema, json_object → JSON mime type, text → nothing', () => {
    const schema = { type: 'object', properties: { mood: { type: 'string' } }, required: ['mood'] };
    expect(build({ response_format: { type: 'json_schema', json_schema: { name: 'mood', schema, strict: true } } }).generationConfig).toEqual({
      responseMimeType: 'application/json',
      responseJsonSchema: schema,
    });
    expect(build({ response_format: { type: 'json_object' } }).generationConfig).toEqual({ responseMimeType: 'application/json' });
    expect(build({ response_format: { type: 'text' } })).not.toHaveProperty('generationConfig');
  });

  it('logprobs → responseLogprobs, top_logprobs → logprobs; false and 0 are left out', () => {
    expect(build({ logprobs: true, top_logprobs: 3 }).generationConfig).toEqual({ responseLogprobs: true, logprobs: 3 });
    expect(build({ logprobs: true, top_logprobs: 0 }).generationConfig).toEqual({ responseLogprobs: true });
    expect(build({ logprobs: false, top_logprobs: 2 })).not.toHaveProperty('generationConfig');
  });

  it('reasoning_effort: a thinking budget before Gemini 3, a thinking level from Gemini 3 on', () => {
    expect(build({ reasoning_effort: 'none' }, { model: 'gemini-2.5-flash' }).generationConfig).toEqual({ thinkingConfig: { thinkingBudget: 0 } });
    expect(build({ reasoning_effort: 'medium' }, { model: 'models/gemini-2.5-pro' }).generationConfig).toEqual({ thinkingConfig: { thinkingBudget: 8192 } });
    expect(build({ reasoning_effort: 'high' }, { model: 'gemini-flash-latest' }).generationConfig).toEqual({ thinkingConfig: { thinkingBudget: 24576 } });
    expect(build({ reasoning_effort: 'low' }, { model: 'gemini-3-pro-preview' }).generationConfig).toEqual({ thinkingConfig: { thinkingLevel: 'low' } });
    expect(build({ reasoning_effort: 'none' }, { model: 'gemini-3.1-flash' }).generationConfig).toEqual({ thinkingConfig: { thinkingLevel: 'minimal' } });
    expect(rejection({ reasoning_effort: 'extreme' }).param).toBe('reasoning_effort');
  });

  it("the client's own thinking_config wins over reasoning_effort; cached_content → cachedContent", () => {
    const body = build({ reasoning_effort: 'low', google: { thinking_config: { thinking_budget: 99, include_thoughts: true }, cached_content: 'cachedContents/abc' } }, { model: 'gemini-2.5-flash' });
    expect(body.generationConfig).toEqual({ thinkingConfig: { thinkingBudget: 99, includeThoughts: true } });
    expect(body.cachedContent).toBe('cachedContents/abc');
    expect(build({ reasoning_effort: 'low', google: { thinking_config: { include_thoughts: true } } }, { model: 'gemini-2.5-flash' }).generationConfig).toEqual({
      thinkingConfig: { thinkingBudget: 1024, includeThoughts: true },
    });
  });

  it('user and metadata have no Gemini field: left out; safetySettings come from the provider options', () => {
    const safetySettings = [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_ONLY_HIGH' }];
    expect(build({ user: 'u1', metadata: { a: 'b' } }, {}, { safetySettings })).toEqual({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }], safetySettings });
  });
});

describe('tools and tool_choice', () => {
  const tools = [{ type: 'function' as const, function: { name: 'look' } }];

  it('none → NONE, required → ANY; a tool without parameters has no schema', () => {
    expect(build({ tools, tool_choice: 'none' })).toMatchObject({ tools: [{ functionDeclarations: [{ name: 'look' }] }], toolConfig: { functionCallingConfig: { mode: 'NONE' } } });
    expect(build({ tools, tool_choice: 'required' }).toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY' } });
    expect(build({ tools })).not.toHaveProperty('toolConfig');
  });

  it('tool_choice without tools sends neither', () => {
    const body = build({ tool_choice: 'required' });
    expect(body).not.toHaveProperty('tools');
    expect(body).not.toHaveProperty('toolConfig');
  });

  it('tool_choice of another kind (allowed_tools) is an unsupported parameter', () => {
    // Cast on purpose: a tool_choice kind the types exclude, as a newer client may send.
    expect(rejection({ tools, tool_choice: { type: 'allowed_tools', allowed_tools: { mode: 'auto', tools: [] } } as never }).param).toBe('tool_choice');
  });
});

describe('messages → contents', () => {
  it('system and developer messages anywhere join systemInstruction; same-role turns merge; empty turns are left out', () => {
    const body = build({
      messages: [
        { role: 'system', content: 'Be brief.' },
        user('Hi'),
        { role: 'developer', content: [{ type: 'text', text: 'Answer in French.' }] },
        user(''),
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Again' },
            { type: 'text', text: '' },
          ],
        },
        { role: 'assistant', content: '' },
        { role: 'assistant', content: 'Bonjour' },
        { role: 'system', content: '' },
      ],
    });
    expect(body).toEqual({
      systemInstruction: { role: 'user', parts: [{ text: 'Be brief.' }, { text: 'Answer in French.' }] },
      contents: [
        { role: 'user', parts: [{ text: 'Hi' }, { text: 'Again' }] },
        { role: 'model', parts: [{ text: 'Bonjour' }] },
      ],
    });
  });

  it('only system messages: sent as the user turn (Gemini requires contents)', () => {
    expect(build({ messages: [{ role: 'system', content: 'Say hello.' }] })).toEqual({ contents: [{ role: 'user', parts: [{ text: 'Say hello.' }] }] });
  });

  it('parallel tool calls and their results: one model turn, one user turn; results by name, non-objects under output', () => {
    const body = build({
      messages: [
        user('Weather in Paris and Rome?'),
        {
          role: 'assistant',
          content: 'Checking.',
          tool_calls: [
            { id: 'a', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } },
            { id: 'b', type: 'function', function: { name: 'time', arguments: '' } },
          ],
        },
        { role: 'tool', tool_call_id: 'b', content: 'noon' },
        { role: 'tool', tool_call_id: 'a', content: [{ type: 'text', text: '[1,2]' }] },
        user('Thanks'),
      ],
    });
    expect(body.contents).toEqual([
      { role: 'user', parts: [{ text: 'Weather in Paris and Rome?' }] },
      { role: 'model', parts: [{ text: 'Checking.' }, { functionCall: { name: 'weather', args: { city: 'Paris' } } }, { functionCall: { name: 'time', args: {} } }] },
      { role: 'user', parts: [{ functionResponse: { name: 'time', response: { output: 'noon' } } }, { functionResponse: { name: 'weather', response: { output: [1, 2] } } }, { text: 'Thanks' }] },
    ]);
  });

  it('a tool result for an unknown call id, and tool-call arguments that are not JSON, are 400s', () => {
    const unknown = rejection({ messages: [user('x'), { role: 'tool', tool_call_id: 'nope', content: '1' }] });
    expect(unknown).toBeInstanceOf(GatewayError);
    expect(unknown).toMatchObject({ code: 'invalid_request', param: 'messages[1].tool_call_id' });
    const bad = rejection({ messages: [{ role: 'assistant', content: null, tool_calls: [{ id: 't', type: 'function', function: { name: 'f', arguments: '{oops' } }] }] });
    expect(bad).toMatchObject({ code: 'invalid_request', param: 'messages[0].tool_calls[0].function.arguments' });
  });

  it('images by URL → fileData (with the type the extension names), audio and inline files → inlineData', () => {
    const body = build({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image_url', image_url: { url: 'https://example.com/photos/k.PNG?size=2', detail: 'high' } },
            { type: 'image_url', image_url: { url: 'https://example.com/render' } },
            { type: 'image_url', image_url: { url: 'gs://bucket/cat.jpg' } },
            { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } },
            { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0=', filename: 'a.pdf' } },
          ],
        },
      ],
    });
    expect(body.contents).toEqual([
      {
        role: 'user',
        parts: [
          { fileData: { mimeType: 'image/png', fileUri: 'https://example.com/photos/k.PNG?size=2' } },
          { fileData: { fileUri: 'https://example.com/render' } },
          { fileData: { mimeType: 'image/jpeg', fileUri: 'gs://bucket/cat.jpg' } },
          { inlineData: { mimeType: 'audio/wav', data: 'UklGRg==' } },
          { inlineData: { mimeType: 'application/pdf', data: 'JVBERi0=' } },
        ],
      },
    ]);
  });
});

describe('thought signatures', () => {
  const turn = (extra: Record<string, unknown> | undefined) => ({
    messages: [
      user('go'),
      {
        role: 'assistant' as const,
        content: null,
        tool_calls: [
          { id: 'c1', type: 'function' as const, function: { name: 'f', arguments: '{}' }, ...(extra ? { extra_content: extra } : {}) },
          { id: 'c2', type: 'function' as const, function: { name: 'g', arguments: '{}' } },
        ],
      },
      { role: 'tool' as const, tool_call_id: 'c1', content: '{}' },
      { role: 'tool' as const, tool_call_id: 'c2', content: '{}' },
    ],
  });
  const modelTurn = (body: Record<string, unknown>) => (body.contents as Array<{ parts: unknown }>)[1].parts;

  it("a tool call's extra_content.google.thought_signature goes back as the part's thoughtSignature", () => {
    expect(modelTurn(build(turn({ google: { thought_signature: 'c2lnbmF0dXJl' } }), { model: 'gemini-3-pro-preview' }))).toEqual([
      { functionCall: { name: 'f', args: {} }, thoughtSignature: 'c2lnbmF0dXJl' },
      { functionCall: { name: 'g', args: {} } },
    ]);
  });

  it("Gemini 3 turns that lost their signature get Google's placeholder on the first call; older models get nothing", () => {
    expect(modelTurn(build(turn(undefined), { model: 'gemini-3-flash-preview' }))).toEqual([
      { functionCall: { name: 'f', args: {} }, thoughtSignature: SKIP_SIGNATURE },
      { functionCall: { name: 'g', args: {} } },
    ]);
    expect(modelTurn(build(turn(undefined), { model: 'gemini-2.5-flash' }))).toEqual([{ functionCall: { name: 'f', args: {} } }, { functionCall: { name: 'g', args: {} } }]);
  });
});

describe('unsupported parameters: 400 naming them, or dropped and logged', () => {
  const cases: Array<[string, Partial<ChatCompletionRequest>]> = [
    ['logit_bias', { logit_bias: { '50256': -100 } }],
    ['audio', { audio: { voice: 'alloy', format: 'wav' } }],
    ['prediction', { prediction: { type: 'content', content: 'x' } }],
    ['modalities', { modalities: ['text', 'audio'] }],
    ['service_tier', { service_tier: 'flex' }],
    // Cast on purpose: a hosted tool the chat types exclude, as a newer client may send.
    ['tools[0]', { tools: [{ type: 'web_search' } as never] }],
    ['messages[0].role', { messages: [{ role: 'function', name: 'f', content: '1' }, user('x')] }],
    [
      'messages[0].content[0]',
      {
        messages: [
          {
            role: 'user',
            content: [
              { type: 'refusal', refusal: 'no' },
              { type: 'text', text: 'x' },
            ],
          },
        ],
      },
    ],
    [
      'messages[0].content[0]',
      {
        messages: [
          {
            role: 'user',
            content: [
              { type: 'image_url', image_url: { url: 'data:image/svg+xml,<svg/>' } },
              { type: 'text', text: 'x' },
            ],
          },
        ],
      },
    ],
  ];

  for (const [param, request] of cases) {
    it(`${param}`, () => {
      const err = rejection(request);
      expect(err).toBeInstanceOf(GatewayError);
      expect(err.code).toBe('unsupported_parameter');
      expect(err.param).toBe(param);
      const call = callOf(request, { dropUnsupportedParams: true });
      const body = buildGeminiRequest(call);
      expect(call.log.info).toHaveBeenCalledWith(expect.objectContaining({ param }), `dropped unsupported parameter '${param}'`);
      expect(JSON.stringify(body)).not.toMatch(/web_search|50256|alloy|svg|"no"|flex/);
    });
  }

  it('parallel_tool_calls: false is a hint Gemini cannot take: dropped and reported, never refused', () => {
    const drop = vi.fn();
    const body = build({ parallel_tool_calls: false, tools: [{ type: 'function', function: { name: 'f' } }] }, { drop });
    expect(drop).toHaveBeenCalledWith(expect.objectContaining({ field: 'parallel_tool_calls', what: 'false' }));
    expect(JSON.stringify(body)).not.toMatch(/parallel/);
  });

  it('no-op values pass: n 1, an empty logit_bias, text modalities, parallel_tool_calls true', () => {
    expect(build({ n: 1, logit_bias: {}, modalities: ['text'], parallel_tool_calls: true, service_tier: 'auto' })).toEqual({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] });
  });
});
