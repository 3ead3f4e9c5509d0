/** OpenAI request → exact Converse body, checked against recorded requests where they fit. */
import { describe, expect, it, type vi } from 'vitest';
import type { ChatCompletionRequest, ChatMessage } from '../../openai-types.ts';
import type { ProviderCall } from '../../plugin-api.ts';
import { GatewayError } from '../../errors.ts';
import { applyCapabilities } from '../../providers/capabilities.ts';
import { buildConverseBody, buildConverseRequest, CONVERSE_CAPABILITIES, conversePath, type ConverseRequestSettings } from './request.ts';
import { callFactory, loadFixture } from 'switchyard-gateway/kit/testing';

/** This provider's recorded payloads. */
const FIXTURES = new URL('../../../test/fixtures/bedrock/', import.meta.url);

// biome-ignore lint/suspicious/noExplicitAny: a recorded JSON body, whose fields the tests read as they find them
const recorded = (name: string) => loadFixture(FIXTURES, name).request as Record<string, any>;

const rawCallOf = callFactory({ provider: 'aws', model: 'us.amazon.nova-micro-v1:0' });
/** A call as the core hands it over: the plugin's declared capabilities applied first. */
const callOf: typeof rawCallOf = (request, extra) => {
  const call = rawCallOf(request, extra);
  return { ...call, request: applyCapabilities(call, CONVERSE_CAPABILITIES) };
};

const build = (request: Partial<ChatCompletionRequest>, settings: ConverseRequestSettings = {}, extra: Partial<ProviderCall> = {}) => buildConverseBody(callOf(request, extra), settings);

function rejection(request: Partial<ChatCompletionRequest>): GatewayError {
  try {
    build(request);
  } catch (err) {
    return err as GatewayError;
  }
  throw new Error('expected the request to be rejected');
}

/** The recorded requests send `inferenceConfig: {}` and `system: []`; the gateway leaves empty ones out. */
function withoutEmpties(body: Record<string, unknown>): Record<string, unknown> {
  const out = { ...body };
  if (out.inferenceConfig && Object.keys(out.inferenceConfig).length === 0) delete out.inferenceConfig;
  if (Array.isArray(out.system) && out.system.length === 0) delete out.system;
  return out;
}

const getCapital = {
  type: 'function' as const,
  function: {
    name: 'get_capital',
    description: 'Get the capital of a country.',
    parameters: { additionalProperties: false, properties: { country: { description: 'The country name.', type: 'string' } }, required: ['country'], type: 'object' },
  },
};
const followupTools = [
  {
    type: 'function' as const,
    function: {
      name: 'get_capital',
      description: 'Get the capital of a country.',
      parameters: { properties: { country: { description: 'The country name.', title: 'Country', type: 'string' } }, required: ['country'], type: 'object', additionalProperties: false },
    },
  },
  {
    type: 'function' as const,
    function: {
      name: 'get_temperature',
      description: 'Get the temperature in a city.',
      parameters: { properties: { city: { description: 'The city name.', title: 'City', type: 'string' } }, required: ['city'], type: 'object', additionalProperties: false },
    },
  },
];

describe('recorded requests, key for key', () => {
  it('system + user (converse-basic-system)', () => {
    const body = build({
      messages: [
        { role: 'system', content: 'You are a chatbot.' },
        { role: 'user', content: 'Hello!' },
      ],
    });
    expect(body).toEqual(withoutEmpties(recorded('converse-basic-system')));
    expect(body).not.toHaveProperty('inferenceConfig');
  });

  it('temperature 0 is sent (converse-stream-basic)', () => {
    const body = build({
      stream: true,
      temperature: 0,
      messages: [
        { role: 'system', content: 'You are a helpful chatbot.' },
        { role: 'user', content: 'What is the capital of France?' },
      ],
    });
    expect(body).toEqual(recorded('converse-stream-basic'));
  });

  it('an image as a base64 data URL (converse-image-input)', () => {
    const fixture = recorded('converse-image-input');
    const bytes = fixture.messages[0].content[1].image.source.bytes as string;
    const body = build({
      messages: [
        { role: 'system', content: 'You are a helpful chatbot.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this vegetable?' },
            { type: 'image_url', image_url: { url: `data:image/jpeg;base64,${bytes}` } },
          ],
        },
      ],
    });
    expect(body).toEqual(withoutEmpties(fixture));
  });

  it('tools with tool_choice auto (converse-tool-use)', () => {
    const body = build({
      temperature: 0,
      tools: [getCapital],
      tool_choice: 'auto',
      messages: [
        { role: 'system', content: 'You are a helpful chatbot.' },
        { role: 'user', content: 'What is the capital of France?' },
      ],
    });
    expect(body).toEqual(recorded('converse-tool-use'));
  });

  it('tools without tool_choice leave toolChoice out (converse-stream-tool-use)', () => {
    const body = build({
      stream: true,
      top_p: 0.5,
      tools: followupTools,
      messages: [
        { role: 'system', content: 'You are a helpful chatbot.' },
        { role: 'user', content: 'What is the temperature of the capital of France?' },
      ],
    });
    expect(body).toEqual(recorded('converse-stream-tool-use'));
  });

  const thinking =
    '<thinking> To determine the capital of France, I can use the provided tool that returns the capital of a given country. Since the country in question is France, I will use the tool with the country parameter set to "France". </thinking>\n';
  const errorTurns = (tool: ChatMessage): ChatMessage[] => [
    { role: 'system', content: 'You are a helpful chatbot.' },
    { role: 'user', content: 'What is the capital of France?' },
    { role: 'assistant', content: thinking, tool_calls: [{ id: 'tooluse_Ze_bgl9CSqu8aJv7XD-_Dw', type: 'function', function: { name: 'get_capital', arguments: '{"country":"France"}' } }] },
    tool,
  ];

  it('assistant text + tool call, then a tool result with error status (converse-tool-result-error-followup)', () => {
    const body = build({
      temperature: 0,
      tools: [getCapital],
      tool_choice: 'auto',
      messages: errorTurns({ role: 'tool', tool_call_id: 'tooluse_Ze_bgl9CSqu8aJv7XD-_Dw', content: 'The country is not supported.\n\nFix the errors and try again.', status: 'error' }),
    });
    expect(body).toEqual(recorded('converse-tool-result-error-followup'));
    // Anthropic's spelling of the same flag works too.
    const anthropicStyle = build({
      temperature: 0,
      tools: [getCapital],
      tool_choice: 'auto',
      messages: errorTurns({ role: 'tool', tool_call_id: 'tooluse_Ze_bgl9CSqu8aJv7XD-_Dw', content: 'The country is not supported.\n\nFix the errors and try again.', is_error: true }),
    });
    expect(anthropicStyle).toEqual(body);
  });

  it('a plain OpenAI tool result carries no status (only some models accept it); an explicit success is kept', () => {
    const fixture = recorded('converse-stream-tool-result-followup');
    const turns = (extra: Partial<ChatMessage>): ChatMessage[] => [
      { role: 'system', content: 'You are a helpful chatbot.' },
      { role: 'user', content: 'What is the temperature of the capital of France?' },
      {
        role: 'assistant',
        content: fixture.messages[1].content[0].text,
        tool_calls: [{ id: 'tooluse_lAG_zP8QRHmSYOwZzzaCqA', type: 'function', function: { name: 'get_temperature', arguments: '{"city": "Paris"}' } }],
      },
      { role: 'tool', tool_call_id: 'tooluse_lAG_zP8QRHmSYOwZzzaCqA', content: '30°C', ...extra },
    ];
    expect(build({ stream: true, top_p: 0.5, tools: followupTools, messages: turns({ status: 'success' }) })).toEqual(fixture);
    const plain = build({ stream: true, top_p: 0.5, tools: followupTools, messages: turns({}) });
    expect(plain.messages).toEqual([
      fixture.messages[0],
      fixture.messages[1],
      { role: 'user', content: [{ toolResult: { toolUseId: 'tooluse_lAG_zP8QRHmSYOwZzzaCqA', content: [{ text: '30°C' }] } }] },
    ]);
  });
});

describe('system, turns and content', () => {
  it('system and developer messages anywhere become system blocks, one each; empty ones are left out', () => {
    const body = build({
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hi' },
        { role: 'developer', content: [{ type: 'text', text: 'Answer in French.' }] },
        { role: 'system', content: '  ' },
      ],
    });
    expect(body).toEqual({ system: [{ text: 'Be brief.' }, { text: 'Answer in French.' }], messages: [{ role: 'user', content: [{ text: 'Hi' }] }] });
  });

  it('multi-turn: consecutive turns of one role merge, parallel tool results share a user turn ahead of its text', () => {
    const body = build({
      tools: [{ type: 'function', function: { name: 'count', parameters: { type: 'object', properties: { n: { type: 'number' } } } } }],
      messages: [
        { role: 'user', content: 'Count to 1' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'then to 2' },
            { type: 'text', text: '' },
          ],
        },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'count', arguments: '{"n":1}' } },
            { id: 'call_2', type: 'function', function: { name: 'count', arguments: '' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: 'one' },
        {
          role: 'tool',
          tool_call_id: 'call_2',
          content: [
            { type: 'text', text: 'two' },
            { type: 'text', text: 'and a half' },
          ],
        },
        { role: 'user', content: 'Now summarise.' },
        { role: 'assistant', content: '' },
        { role: 'assistant', content: 'Done: 1, 2.' },
      ],
    });
    expect(body.messages).toEqual([
      { role: 'user', content: [{ text: 'Count to 1' }, { text: 'then to 2' }] },
      { role: 'assistant', content: [{ toolUse: { toolUseId: 'call_1', name: 'count', input: { n: 1 } } }, { toolUse: { toolUseId: 'call_2', name: 'count', input: {} } }] },
      {
        role: 'user',
        content: [
          { toolResult: { toolUseId: 'call_1', content: [{ text: 'one' }] } },
          { toolResult: { toolUseId: 'call_2', content: [{ text: 'two' }, { text: 'and a half' }] } },
          { text: 'Now summarise.' },
        ],
      },
      { role: 'assistant', content: [{ text: 'Done: 1, 2.' }] },
    ]);
    expect(body.toolConfig).toEqual({ tools: [{ toolSpec: { name: 'count', inputSchema: { json: { type: 'object', properties: { n: { type: 'number' } } } } } }] });
  });

  it('an empty tool answer is sent as "(empty)": Converse rejects blank text', () => {
    const body = build({
      tools: [getCapital],
      messages: [
        { role: 'user', content: 'x' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_capital', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: '' },
      ],
    });
    expect((body.messages as unknown[])[2]).toEqual({ role: 'user', content: [{ toolResult: { toolUseId: 'c1', content: [{ text: '(empty)' }] } }] });
  });

  it('images: png data URLs as bytes, s3:// URLs as s3Location; https URLs are a 400 naming the part', () => {
    const body = build({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
            { type: 'image_url', image_url: { url: 's3://my-bucket/photos/cat.JPG' } },
            { type: 'text', text: 'Compare.' },
          ],
        },
      ],
    });
    expect(body.messages).toEqual([
      {
        role: 'user',
        content: [
          { image: { format: 'png', source: { bytes: 'iVBORw0KGgo=' } } },
          { image: { format: 'jpeg', source: { s3Location: { uri: 's3://my-bucket/photos/cat.JPG' } } } },
          { text: 'Compare.' },
        ],
      },
    ]);
    const err = rejection({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
          ],
        },
      ],
    });
    expect(err).toBeInstanceOf(GatewayError);
    expect(err.code).toBe('unsupported_parameter');
    expect(err.param).toBe('messages[0].content[1]');
    expect(err.message).toContain('base64 data URL');
    expect(rejection({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/bmp;base64,Qk0=' } }] }] }).param).toBe('messages[0].content[0]');
  });

  it('an inline PDF becomes a document block with a name Converse accepts', () => {
    const body = build({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'file', file: { filename: 'Q3 report_v2.final.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' } },
            { type: 'text', text: 'Summarise.' },
          ],
        },
      ],
    });
    expect(body.messages).toEqual([{ role: 'user', content: [{ document: { format: 'pdf', name: 'Q3 report v2 final', source: { bytes: 'JVBERi0=' } } }, { text: 'Summarise.' }] }]);
    expect(rejection({ messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: 'file-abc' } }] }] }).param).toBe('messages[0].content[0]');
    expect(rejection({ messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }] }] }).param).toBe('messages[0].content[0]');
  });

  it('tool-call arguments that are not JSON are the client’s error', () => {
    const err = rejection({
      messages: [
        { role: 'user', content: 'x' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{nope' } }] },
      ],
    });
    expect(err.code).toBe('invalid_request');
    expect(err.param).toBe('messages[1].tool_calls[0].function.arguments');
  });
});

describe('parameters', () => {
  it('inferenceConfig: max_completion_tokens wins over max_tokens over the provider default; stop as a list', () => {
    expect(build({ max_tokens: 10, max_completion_tokens: 20, temperature: 0.2, top_p: 0.9, stop: 'END' }, { maxTokens: 99 }).inferenceConfig).toEqual({
      maxTokens: 20,
      temperature: 0.2,
      topP: 0.9,
      stopSequences: ['END'],
    });
    expect(build({ max_tokens: 10, stop: ['a', '', 'b'] }, { maxTokens: 99 }).inferenceConfig).toEqual({ maxTokens: 10, stopSequences: ['a', 'b'] });
    expect(build({}, { maxTokens: 99 }).inferenceConfig).toEqual({ maxTokens: 99 });
    expect(build({ stop: [] })).not.toHaveProperty('inferenceConfig');
  });

  it('tool_choice: auto, required → any, a named function → tool; none withholds the tools', () => {
    const tools = [{ type: 'function' as const, function: { name: 'f', description: ' ', parameters: { type: 'object' } } }];
    const spec = { toolSpec: { name: 'f', inputSchema: { json: { type: 'object' } } } };
    expect(build({ tools, tool_choice: 'auto' }).toolConfig).toEqual({ tools: [spec], toolChoice: { auto: {} } });
    expect(build({ tools, tool_choice: 'required' }).toolConfig).toEqual({ tools: [spec], toolChoice: { any: {} } });
    expect(build({ tools, tool_choice: { type: 'function', function: { name: 'f' } } }).toolConfig).toEqual({ tools: [spec], toolChoice: { tool: { name: 'f' } } });
    expect(build({ tools, tool_choice: 'none' })).not.toHaveProperty('toolConfig');
    expect(build({ tools: [{ type: 'function', function: { name: 'g' } }] }).toolConfig).toEqual({ tools: [{ toolSpec: { name: 'g', inputSchema: { json: { type: 'object', properties: {} } } } }] });
    expect(build({ tools, parallel_tool_calls: false }).toolConfig).toEqual({ tools: [spec] });
    expect(build({ tools: [{ type: 'function', function: { name: 'h', parameters: { type: 'object' }, strict: true } }] }).toolConfig).toEqual({
      tools: [{ toolSpec: { name: 'h', inputSchema: { json: { type: 'object' } }, strict: true } }],
    });
  });

  it('a conversation holding tool blocks always has a toolConfig (Converse requires one)', () => {
    const history: ChatMessage[] = [
      { role: 'user', content: 'x' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'lookup', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: 'found' },
    ];
    const tools = [{ type: 'function' as const, function: { name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } } } } }];
    expect(build({ messages: history, tools, tool_choice: 'none' }).toolConfig).toEqual({ tools: [{ toolSpec: { name: 'lookup', inputSchema: { json: tools[0].function.parameters } } }] });
    expect(build({ messages: history }).toolConfig).toEqual({ tools: [{ toolSpec: { name: 'lookup', inputSchema: { json: { type: 'object' } } } }] });
  });

  it('response_format json_schema → outputConfig.textFormat with the schema as a JSON string; text is a no-op', () => {
    const schema = { type: 'object', properties: { capital: { type: 'string' } }, required: ['capital'], additionalProperties: false };
    expect(build({ response_format: { type: 'json_schema', json_schema: { name: 'capital', description: 'The answer', strict: true, schema } } }).outputConfig).toEqual({
      textFormat: { type: 'json_schema', structure: { jsonSchema: { schema: JSON.stringify(schema), name: 'capital', description: 'The answer' } } },
    });
    expect(build({ response_format: { type: 'text' } })).not.toHaveProperty('outputConfig');
    const err = rejection({ response_format: { type: 'json_object' } });
    expect(err.code).toBe('unsupported_parameter');
    expect(err.param).toBe('response_format');
    expect(rejection({ response_format: { type: 'json_schema', json_schema: { name: 'x' } } }).code).toBe('invalid_request');
  });

  it('metadata and user → requestMetadata; Anthropic’s thinking → additionalModelRequestFields', () => {
    expect(build({ metadata: { team: 'search' }, user: 'u-42' }).requestMetadata).toEqual({ team: 'search', user: 'u-42' });
    expect(build({ metadata: { user: 'from-metadata' }, user: 'u-42' }).requestMetadata).toEqual({ user: 'from-metadata' });
    expect(build({ thinking: { type: 'enabled', budget_tokens: 1024 } }).additionalModelRequestFields).toEqual({ thinking: { type: 'enabled', budget_tokens: 1024 } });
  });

  it('a guardrail from the provider settings', () => {
    expect(build({}, { guardrail: { identifier: 'gr-1', version: 'DRAFT', trace: 'enabled' } }).guardrailConfig).toEqual({ guardrailIdentifier: 'gr-1', guardrailVersion: 'DRAFT', trace: 'enabled' });
  });

  it('parameters Converse cannot honour are a 400 naming them; their no-op values pass', () => {
    for (const [request, param] of [
      [{ seed: 7 }, 'seed'],
      [{ n: 2 }, 'n'],
      [{ logprobs: true }, 'logprobs'],
      [{ top_logprobs: 2 }, 'top_logprobs'],
      [{ presence_penalty: 0.5 }, 'presence_penalty'],
      [{ frequency_penalty: -1 }, 'frequency_penalty'],
      [{ logit_bias: { '50256': -100 } }, 'logit_bias'],
      [{ modalities: ['text', 'audio'] }, 'modalities'],
      [{ service_tier: 'flex' }, 'service_tier'],
    ] as const) {
      const err = rejection(request as Partial<ChatCompletionRequest>);
      expect(err.code, param).toBe('unsupported_parameter');
      expect(err.param).toBe(param);
      expect(err.message).toContain(`'${param}'`);
    }
    expect(build({ n: 1, logprobs: false, presence_penalty: 0, frequency_penalty: 0, logit_bias: {}, service_tier: 'auto', parallel_tool_calls: true })).toEqual({
      messages: [{ role: 'user', content: [{ text: 'hi' }] }],
    });
  });

  it('with dropUnsupportedParams they are dropped, and the log says so', () => {
    const call = callOf(
      {
        seed: 7,
        n: 3,
        response_format: { type: 'json_object' },
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'look' },
              { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
            ],
          },
        ],
      },
      { dropUnsupportedParams: true },
    );
    expect(buildConverseBody(call)).toEqual({ messages: [{ role: 'user', content: [{ text: 'look' }] }] });
    const dropped = (call.log.info as ReturnType<typeof vi.fn>).mock.calls.map((c) => (c[0] as { param: string }).param);
    expect(dropped).toEqual(['seed', 'n', 'messages[0].content[1]', 'response_format']);
  });
});

describe('path', () => {
  it('the model id is one encoded path segment; streams use /converse-stream', () => {
    expect(conversePath('us.amazon.nova-micro-v1:0', false)).toBe('/model/us.amazon.nova-micro-v1%3A0/converse');
    expect(conversePath('arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-sonnet-4-5-20250929-v1:0', true)).toBe(
      '/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3Ainference-profile%2Fus.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream',
    );
    expect(buildConverseRequest(callOf({ stream: true })).path).toBe('/model/us.amazon.nova-micro-v1%3A0/converse-stream');
  });
});
