/** Responses requests → chat requests: every input form, tools, formats, and what is refused. */
import { describe, expect, it } from 'vitest';
import { expectValid, loadFixture } from 'switchyard-gateway/kit/testing';
import { GatewayError } from '../../errors.ts';
import type { ChatCompletionRequest } from '../../openai-types.ts';
import { readResponsesRequest, responsesToChat } from './request.ts';

const FIXTURES = new URL('../../../test/fixtures/openai/', import.meta.url);

/** The body is a valid Responses request (OpenAI's schema), and what it becomes a valid chat request. */
function translate(body: Record<string, unknown>): ChatCompletionRequest {
  expectValid('CreateResponse', body);
  const chat = responsesToChat(body);
  expectValid('CreateChatCompletionRequest', chat);
  return chat;
}

/** The GatewayError a body is refused with. */
function refusal(body: unknown): GatewayError {
  try {
    responsesToChat(body);
  } catch (err) {
    if (err instanceof GatewayError) return err;
    throw err;
  }
  throw new Error('expected the request to be refused');
}

const weather = {
  type: 'function',
  name: 'get_weather',
  description: 'Weather in a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
  strict: true,
};

describe('input', () => {
  it('a string is one user message; instructions lead as a system message', () => {
    expect(translate({ model: 'gpt-4o-mini', input: 'Hello' })).toEqual({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello' }] });
    expect(translate({ model: 'm', instructions: 'Be brief.', input: 'Hello' }).messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hello' },
    ]);
  });

  it('messages keep their roles; easy messages with string content, typed messages with parts', () => {
    const chat = translate({
      model: 'm',
      input: [
        { role: 'developer', content: 'Answer in French.' },
        { type: 'message', role: 'system', content: [{ type: 'input_text', text: 'Be kind.' }] },
        { role: 'user', content: 'Hi' },
        { type: 'message', role: 'assistant', id: 'msg_1', status: 'completed', content: [{ type: 'output_text', text: 'Bonjour', annotations: [], logprobs: [] }] },
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'What is this?' },
            { type: 'input_image', image_url: 'https://example.com/cat.png', detail: 'low' },
          ],
        },
      ],
    });
    expect(chat.messages).toEqual([
      { role: 'developer', content: 'Answer in French.' },
      { role: 'system', content: [{ type: 'text', text: 'Be kind.' }] },
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Bonjour' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is this?' },
          { type: 'image_url', image_url: { url: 'https://example.com/cat.png', detail: 'low' } },
        ],
      },
    ]);
  });

  it('images: data URLs pass, detail original is chat high, auto kept; files by data or id', () => {
    const chat = translate({
      model: 'm',
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'original' },
            { type: 'input_image', image_url: 'https://example.com/a.jpg', detail: 'auto' },
            { type: 'input_file', filename: 'a.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' },
            { type: 'input_file', file_id: 'file-abc' },
          ],
        },
      ],
    });
    expect(chat.messages[0].content).toEqual([
      { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'high' } },
      { type: 'image_url', image_url: { url: 'https://example.com/a.jpg', detail: 'auto' } },
      { type: 'file', file: { filename: 'a.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' } },
      { type: 'file', file: { file_id: 'file-abc' } },
    ]);
  });

  it('a past refusal is what the assistant said', () => {
    const chat = translate({
      model: 'm',
      input: [
        { type: 'message', role: 'assistant', id: 'msg_1', status: 'completed', content: [{ type: 'refusal', refusal: "I can't help with that." }] },
        { role: 'user', content: 'Why?' },
      ],
    });
    expect(chat.messages[0]).toEqual({ role: 'assistant', content: "I can't help with that." });
  });

  it('a tool round trip as the SDK sends it (the previous output appended, then outputs) is the recorded chat follow-up', () => {
    const recorded = loadFixture(FIXTURES, 'chat-tool-result-followup').request;
    const chat = translate({
      model: 'gpt-4o',
      tool_choice: 'required',
      tools: [
        { type: 'function', name: 'get_user_country', description: '', parameters: { additionalProperties: false, properties: {}, type: 'object' }, strict: null },
        { type: 'function', name: 'final_result', description: 'The final response which ends this conversation', parameters: recorded.tools[1].function.parameters, strict: null },
      ],
      input: [
        { role: 'user', content: 'What is the largest city in the user country?' },
        { type: 'function_call', id: 'fc_1', call_id: 'call_iXFttys57ap0o16JSlC8yhYo', name: 'get_user_country', arguments: '{}', status: 'completed' },
        { type: 'function_call_output', call_id: 'call_iXFttys57ap0o16JSlC8yhYo', output: 'Mexico' },
      ],
    });
    const { n: _n, stream: _stream, ...expected } = recorded;
    expected.messages[1].content = null; // chat's way of saying "calls only"; the recording left it out
    expect(chat).toEqual(expected);
  });

  it('parallel calls share one assistant message, after the text of the same turn; reasoning items are dropped', () => {
    const chat = translate({
      model: 'm',
      tools: [weather],
      input: [
        { role: 'user', content: 'Weather in Paris and Rome?' },
        { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'gAAAA...' },
        { type: 'message', role: 'assistant', id: 'msg_1', status: 'completed', content: [{ type: 'output_text', text: 'Checking both.', annotations: [], logprobs: [] }] },
        { type: 'function_call', call_id: 'call_a', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { type: 'function_call', call_id: 'call_b', name: 'get_weather', arguments: '{"city":"Rome"}' },
        { type: 'function_call_output', call_id: 'call_a', output: 'Sunny' },
        { type: 'function_call_output', call_id: 'call_b', output: [{ type: 'input_text', text: 'Rain' }] },
        { role: 'user', content: 'And tomorrow?' },
        { type: 'function_call', call_id: 'call_c', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { type: 'function_call_output', call_id: 'call_c', output: 'Cloudy' },
      ],
    });
    expect(chat.messages).toEqual([
      { role: 'user', content: 'Weather in Paris and Rome?' },
      {
        role: 'assistant',
        content: 'Checking both.',
        tool_calls: [
          { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          { id: 'call_b', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_a', content: 'Sunny' },
      { role: 'tool', tool_call_id: 'call_b', content: [{ type: 'text', text: 'Rain' }] },
      { role: 'user', content: 'And tomorrow?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_c', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
      { role: 'tool', tool_call_id: 'call_c', content: 'Cloudy' },
    ]);
  });
});

describe('parameters', () => {
  it('function tools are nested the chat way; tool_choice and parallel_tool_calls carried', () => {
    const chat = translate({
      model: 'm',
      input: 'x',
      tools: [weather, { type: 'function', name: 'noop', parameters: null, strict: false }],
      tool_choice: { type: 'function', name: 'get_weather' },
      parallel_tool_calls: false,
    });
    expect(chat.tools).toEqual([
      { type: 'function', function: { name: 'get_weather', description: 'Weather in a city', parameters: weather.parameters, strict: true } },
      { type: 'function', function: { name: 'noop', strict: false } },
    ]);
    expect(chat.tool_choice).toEqual({ type: 'function', function: { name: 'get_weather' } });
    expect(chat.parallel_tool_calls).toBe(false);
    for (const choice of ['none', 'auto', 'required'] as const) expect(translate({ model: 'm', input: 'x', tools: [weather], tool_choice: choice }).tool_choice).toBe(choice);
  });

  it('allowed_tools narrows the tools and keeps its mode', () => {
    const noop = { type: 'function', name: 'noop', parameters: null, strict: false };
    const chat = translate({ model: 'm', input: 'x', tools: [weather, noop], tool_choice: { type: 'allowed_tools', mode: 'required', tools: [{ type: 'function', name: 'noop' }] } });
    expect(chat.tools?.map((t) => t.function.name)).toEqual(['noop']);
    expect(chat.tool_choice).toBe('required');
    expect(refusal({ model: 'm', input: 'x', tools: [noop], tool_choice: { type: 'allowed_tools', mode: 'auto', tools: [{ type: 'function', name: 'ghost' }] } })).toMatchObject({
      code: 'invalid_request',
      param: 'tool_choice.tools[0].name',
    });
  });

  it('text.format json_schema → response_format json_schema (nested); json_object; text is chat default', () => {
    const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false };
    expect(translate({ model: 'm', input: 'x', text: { format: { type: 'json_schema', name: 'location', schema, strict: true, description: 'A city' } } }).response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'location', schema, strict: true, description: 'A city' },
    });
    expect(translate({ model: 'm', input: 'x', text: { format: { type: 'json_object' } } }).response_format).toEqual({ type: 'json_object' });
    expect(translate({ model: 'm', input: 'x', text: { format: { type: 'text' }, verbosity: 'low' } })).toEqual({ model: 'm', messages: [{ role: 'user', content: 'x' }], verbosity: 'low' });
  });

  it('sampling, limits, reasoning effort, metadata and identifiers', () => {
    const chat = translate({
      model: 'o4-mini',
      input: 'x',
      max_output_tokens: 256,
      temperature: 0.2,
      top_p: 0.9,
      reasoning: { effort: 'low', summary: 'auto' },
      metadata: { team: 'search' },
      user: 'u-1',
      safety_identifier: 'hash-1',
      prompt_cache_key: 'k',
      service_tier: 'flex',
      store: false,
      include: ['reasoning.encrypted_content'],
      truncation: 'disabled',
      stream_options: { include_obfuscation: false },
    });
    expect(chat).toEqual({
      model: 'o4-mini',
      messages: [{ role: 'user', content: 'x' }],
      max_completion_tokens: 256,
      temperature: 0.2,
      top_p: 0.9,
      reasoning_effort: 'low',
      metadata: { team: 'search' },
      user: 'u-1',
      safety_identifier: 'hash-1',
      prompt_cache_key: 'k',
      service_tier: 'flex',
    });
  });

  it('stream asks for the usage chunk; logprobs when included or top_logprobs is set', () => {
    expect(translate({ model: 'm', input: 'x', stream: true })).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    expect(translate({ model: 'm', input: 'x', include: ['message.output_text.logprobs'] })).toMatchObject({ logprobs: true });
    expect(translate({ model: 'm', input: 'x', top_logprobs: 3 })).toMatchObject({ logprobs: true, top_logprobs: 3 });
  });

  it('nulls are absent', () => {
    const body = {
      model: 'm',
      input: 'x',
      instructions: null,
      tools: null,
      tool_choice: null,
      parallel_tool_calls: null,
      text: null,
      max_output_tokens: null,
      temperature: null,
      top_p: null,
      reasoning: null,
      metadata: null,
      include: null,
      stream: null,
      store: null,
      previous_response_id: null,
      truncation: null,
    };
    expect(responsesToChat(body)).toEqual({ model: 'm', messages: [{ role: 'user', content: 'x' }] });
    // store: null is OpenAI's default, true.
    expect(readResponsesRequest(body)).toEqual({ model: 'm', input: 'x', tools: [], callables: [], include: [], stream: false, untranslatable: [], store: true });
  });

  it('store (default true) and previous_response_id are read for the stored responses', () => {
    expect(readResponsesRequest({ model: 'm', input: 'x' })).toMatchObject({ store: true });
    expect(readResponsesRequest({ model: 'm', input: 'x', store: false, previous_response_id: 'resp_1' })).toMatchObject({ store: false, previous_response_id: 'resp_1' });
    expect(() => readResponsesRequest({ model: 'm', input: 'x', store: 'yes' })).toThrow(/Invalid 'store'/);
    expect(() => readResponsesRequest({ model: 'm', input: 'x', previous_response_id: 7 })).toThrow(/Invalid 'previous_response_id'/);
    expect(readResponsesRequest({ model: 'm', input: 'x', conversation: { id: 'conv_1' } })).toMatchObject({ conversation: 'conv_1' });
    expect(readResponsesRequest({ model: 'm', input: 'x', conversation: 'conv_1' })).toMatchObject({ conversation: 'conv_1' });
    expect(() => readResponsesRequest({ model: 'm', input: 'x', conversation: 'conv_1', previous_response_id: 'resp_1' })).toThrow(/Mutually exclusive/);
  });
});

describe('refused: what the translation cannot honour (400 unsupported_parameter, param named)', () => {
  it.each([
    ['background', { background: true }, /runs no responses in the background/],
    ['prompt', { prompt: { id: 'pmpt_1' } }, /keeps no prompts/],
  ])('%s', (param, extra, message) => {
    const err = refusal({ model: 'm', input: 'x', ...extra });
    expect(err).toMatchObject({ code: 'unsupported_parameter', status: 400, type: 'invalid_request_error', param });
    expect(err.message).toMatch(message);
  });

  it.each([
    [
      'input[1]',
      {
        input: [
          { role: 'user', content: 'x' },
          { type: 'item_reference', id: 'msg_1' },
        ],
      },
    ],
    ['input[0].content[0].file_id', { input: [{ role: 'user', content: [{ type: 'input_image', file_id: 'file-1', detail: 'auto' }] }] }],
    ['input[0].content[0].file_url', { input: [{ role: 'user', content: [{ type: 'input_file', file_url: 'https://example.com/a.pdf' }] }] }],
    [
      'input[0].content[1]',
      {
        input: [
          {
            role: 'developer',
            content: [
              { type: 'input_text', text: 'x' },
              { type: 'input_image', image_url: 'https://example.com/a.png', detail: 'auto' },
            ],
          },
        ],
      },
    ],
  ])('%s', (param, extra) => {
    expect(refusal({ model: 'm', ...extra })).toMatchObject({ code: 'unsupported_parameter', param });
  });
});

describe('bad input: 400 invalid_request naming the field, never a crash', () => {
  it.each([
    [null, null, 'invalid_request'],
    ['model', { input: 'x' }, 'missing_required_parameter'],
    ['input', { model: 'm' }, 'missing_required_parameter'],
    ['model', { model: 42, input: 'x' }, 'invalid_request'],
    ['input', { model: 'm', input: 42 }, 'invalid_request'],
    ['input', { model: 'm', input: [] }, 'invalid_request'],
    ['input', { model: 'm', input: [{ type: 'reasoning', id: 'rs_1', summary: [] }] }, 'invalid_request'],
    ['input[0]', { model: 'm', input: ['hi'] }, 'invalid_request'],
    ['input[0].role', { model: 'm', input: [{ role: 'tool', content: 'x' }] }, 'invalid_request'],
    ['input[0].content', { model: 'm', input: [{ role: 'user' }] }, 'invalid_request'],
    ['input[0].content[0].type', { model: 'm', input: [{ role: 'user', content: [{ type: 'text', text: 'chat style' }] }] }, 'invalid_request'],
    ['input[0].content[0].text', { model: 'm', input: [{ role: 'user', content: [{ type: 'input_text' }] }] }, 'invalid_request'],
    ['input[0].content[0].detail', { model: 'm', input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'https://x/y.png', detail: 'huge' }] }] }, 'invalid_request'],
    ['input[0].call_id', { model: 'm', input: [{ type: 'function_call', name: 'f', arguments: '{}' }] }, 'invalid_request'],
    [
      'input[0].arguments',
      {
        model: 'm',
        input: [
          { type: 'function_call', call_id: 'c', name: 'f', arguments: {} },
          { type: 'function_call_output', call_id: 'c', output: '' },
        ],
      },
      'invalid_request',
    ],
    ['input[0]', { model: 'm', input: [{ type: 'function_call', call_id: 'c', name: 'f', arguments: '{}' }] }, 'invalid_request'],
    [
      'input[1].call_id',
      {
        model: 'm',
        input: [
          { role: 'user', content: 'x' },
          { type: 'function_call_output', call_id: 'c', output: 'y' },
        ],
      },
      'invalid_request',
    ],
    [
      'input[1].output',
      {
        model: 'm',
        input: [
          { type: 'function_call', call_id: 'c', name: 'f', arguments: '{}' },
          { type: 'function_call_output', call_id: 'c', output: 7 },
        ],
      },
      'invalid_request',
    ],
    ['tools', { model: 'm', input: 'x', tools: {} }, 'invalid_request'],
    ['tools[0].name', { model: 'm', input: 'x', tools: [{ type: 'function' }] }, 'invalid_request'],
    ['tools[0].parameters', { model: 'm', input: 'x', tools: [{ type: 'function', name: 'f', parameters: 'none' }] }, 'invalid_request'],
    ['tool_choice', { model: 'm', input: 'x', tool_choice: 'always' }, 'invalid_request'],
    ['text.format.type', { model: 'm', input: 'x', text: { format: { type: 'xml' } } }, 'invalid_request'],
    ['text.format.schema', { model: 'm', input: 'x', text: { format: { type: 'json_schema', name: 'n' } } }, 'invalid_request'],
    ['max_output_tokens', { model: 'm', input: 'x', max_output_tokens: 1.5 }, 'invalid_request'],
    ['temperature', { model: 'm', input: 'x', temperature: 'hot' }, 'invalid_request'],
    ['metadata.n', { model: 'm', input: 'x', metadata: { n: 1 } }, 'invalid_request'],
    ['include', { model: 'm', input: 'x', include: 'reasoning.encrypted_content' }, 'invalid_request'],
    ['store', { model: 'm', input: 'x', store: 'no' }, 'invalid_request'],
  ])('%s', (param, body, code) => {
    const err = refusal(body);
    expect(err).toMatchObject({ code, status: 400, param });
    expect(err.message.length).toBeGreaterThan(10);
  });

  it("dangling calls and outputs are told in OpenAI's words", () => {
    expect(refusal({ model: 'm', input: [{ type: 'function_call', call_id: 'call_1', name: 'f', arguments: '{}' }] }).message).toBe('No tool output found for function call call_1.');
    expect(
      refusal({
        model: 'm',
        input: [
          { role: 'user', content: 'x' },
          { type: 'function_call_output', call_id: 'call_1', output: 'y' },
        ],
      }).message,
    ).toBe('No tool call found for function call output with call_id call_1.');
  });
});

describe('dropped and reported (untranslatable), never refused', () => {
  it('unknown top-level fields and client_metadata; truncation auto, context_management, moderation', () => {
    const request = readResponsesRequest({
      model: 'm',
      input: 'x',
      client_metadata: { session_id: 's' },
      brand_new_field: 1,
      truncation: 'auto',
      context_management: [{ type: 'compaction', compact_threshold: 1000 }],
      moderation: { enabled: true },
      store: false,
    });
    expect(request.untranslatable.map((d) => [d.field, d.what])).toEqual([
      ['client_metadata', undefined],
      ['brand_new_field', undefined],
      ['truncation', 'truncation: auto'],
      ['context_management', undefined],
      ['moderation', undefined],
    ]);
    for (const drop of request.untranslatable) expect(drop.reason.length).toBeGreaterThan(10);
    expect(responsesToChat({ model: 'm', input: 'x', brand_new_field: 1 })).toEqual({ model: 'm', messages: [{ role: 'user', content: 'x' }] });
    const odd = readResponsesRequest(JSON.parse('{"model":"m","input":"x","constructor":1,"__proto__":2}'));
    expect(odd.untranslatable).toEqual([
      { field: 'constructor', reason: "'constructor' is not a field the translation to chat knows" },
      { field: '__proto__', reason: "'__proto__' is not a field the translation to chat knows" },
    ]);
  });

  it('a hosted tool, a choice of one, and past hosted calls in input', () => {
    const request = readResponsesRequest({
      model: 'm',
      input: [
        { role: 'user', content: 'x' },
        { type: 'file_search_call', id: 'fs_1', status: 'completed', queries: ['q'] },
      ],
      tools: [weather, { type: 'file_search', vector_store_ids: ['vs_1'] }],
      tool_choice: { type: 'web_search_preview' },
    });
    expect(request.untranslatable.map((d) => [d.field, d.what])).toEqual([
      ['tools[1]', 'file_search'],
      ['input[1]', 'file_search_call'],
      ['tool_choice', 'web_search_preview'],
    ]);
    const chat = responsesToChat({
      model: 'm',
      input: [
        { role: 'user', content: 'x' },
        { type: 'file_search_call', id: 'fs_1', status: 'completed', queries: ['q'] },
      ],
      tools: [weather, { type: 'file_search', vector_store_ids: ['vs_1'] }],
    });
    expect(chat.messages).toEqual([{ role: 'user', content: 'x' }]);
    expect(chat.tools?.map((t) => t.function.name)).toEqual(['get_weather']);
    const allowed = readResponsesRequest({
      model: 'm',
      input: 'x',
      tools: [weather],
      tool_choice: {
        type: 'allowed_tools',
        mode: 'auto',
        tools: [
          { type: 'mcp', server_label: 'x' },
          { type: 'function', name: 'get_weather' },
        ],
      },
    });
    expect(allowed.untranslatable).toEqual([{ field: 'tool_choice.tools[0]', what: 'mcp', reason: expect.any(String) }]);
  });

  it('a custom tool chosen by name, and a namespaced function, are chosen by their chat names', () => {
    const tools = [
      { type: 'custom', name: 'apply_patch' },
      { type: 'namespace', name: 'crm', description: 'CRM', tools: [{ type: 'function', name: 'list' }] },
    ];
    expect(translate({ model: 'm', input: 'x', tools, tool_choice: { type: 'custom', name: 'apply_patch' } }).tool_choice).toEqual({ type: 'function', function: { name: 'apply_patch' } });
    const chat = responsesToChat({ model: 'm', input: 'x', tools, tool_choice: { type: 'allowed_tools', mode: 'required', tools: [{ type: 'function', name: 'list', namespace: 'crm' }] } });
    expect(chat.tools?.map((t) => t.function.name)).toEqual(['crm__list']);
  });
});
