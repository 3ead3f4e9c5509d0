/** OpenAI request → exact Anthropic Messages body, checked against recorded requests where they fit. */
import { describe, expect, it } from 'vitest';
import type { ChatCompletionRequest } from '../../openai-types.ts';
import type { ProviderCall } from '../../plugin-api.ts';
import { GatewayError } from '../../errors.ts';
import { applyCapabilities } from '../../providers/capabilities.ts';
import { ANTHROPIC_CAPABILITIES, buildAnthropicRequest, type AnthropicRequestSettings } from './request.ts';
import { callFactory, loadFixture } from 'switchyard-gateway/kit/testing';

/** This provider's recorded payloads. */
const FIXTURES = new URL('../../../test/fixtures/anthropic/', import.meta.url);

const recorded = (name: string) => loadFixture(FIXTURES, name).request;

const rawCallOf = callFactory({ provider: 'claude', model: 'claude-3-opus-latest' });
/** A call as the core hands it over: the plugin's declared capabilities applied first. */
const callOf: typeof rawCallOf = (request, extra) => {
  const call = rawCallOf(request, extra);
  return { ...call, request: applyCapabilities(call, ANTHROPIC_CAPABILITIES) };
};

const build = (request: Partial<ChatCompletionRequest>, settings: Partial<AnthropicRequestSettings> = {}, extra: Partial<ProviderCall> = {}) =>
  buildAnthropicRequest(callOf(request, extra), { maxTokens: 4096, ...settings });

function rejection(request: Partial<ChatCompletionRequest>): GatewayError {
  try {
    build(request);
  } catch (err) {
    return err as GatewayError;
  }
  throw new Error('expected the request to be rejected');
}

describe('system, turns and content', () => {
  it('a system message and a user text part: the recorded request, key for key', () => {
    const fixture = recorded('messages-system-prompt');
    const body = build({
      model: 'claude-3-opus-latest',
      messages: [
        { role: 'system', content: 'You are a helpful assistant.\n\n' },
        { role: 'user', content: [{ type: 'text', text: 'What is the capital of France?' }] },
      ],
    });
    const { stream: _stream, ...expected } = fixture;
    expect(body).toEqual(expected);
  });

  it('system and developer messages anywhere are joined into `system`; max_completion_tokens wins', () => {
    const body = build({
      max_tokens: 10,
      max_completion_tokens: 20,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hi' },
        { role: 'developer', content: [{ type: 'text', text: 'Answer in French.' }] },
        { role: 'assistant', content: 'Bonjour' },
        { role: 'user', content: 'Again' },
      ],
    });
    expect(body).toEqual({
      model: 'claude-3-opus-latest',
      max_tokens: 20,
      system: 'Be brief.\n\nAnswer in French.',
      messages: [
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: [{ type: 'text', text: 'Bonjour' }] },
        { role: 'user', content: 'Again' },
      ],
    });
  });

  it('consecutive turns of one role merge; empty turns and empty text parts are left out', () => {
    const body = build({
      max_tokens: 5,
      messages: [
        { role: 'user', content: 'one' },
        {
          role: 'user',
          content: [
            { type: 'text', text: '' },
            { type: 'text', text: 'two' },
          ],
        },
        { role: 'assistant', content: '' },
        { role: 'user', content: 'three' },
        { role: 'assistant', content: 'ok' },
        { role: 'assistant', content: [{ type: 'text', text: 'then' }] },
      ],
    });
    expect(body.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'one' },
          { type: 'text', text: 'two' },
          { type: 'text', text: 'three' },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'ok' },
          { type: 'text', text: 'then' },
        ],
      },
    ]);
  });

  it('images: a data URL is the recorded base64 block, an https URL a url block', () => {
    const fixture = recorded('messages-image-input-base64');
    const image = fixture.messages[0].content[1].source.data as string;
    const body = build({
      model: 'claude-haiku-4-5',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this vegetable?' },
            { type: 'image_url', image_url: { url: `data:image/jpeg;base64,${image}`, detail: 'high' } },
          ],
        },
      ],
    });
    expect(body.messages).toEqual(fixture.messages);
    expect(body.max_tokens).toBe(fixture.max_tokens);

    const url = build({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/a.png' } }] }] });
    expect(url.messages).toEqual([{ role: 'user', content: [{ type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } }] }]);
  });

  it('an inline PDF file part is a document block; audio is unsupported', () => {
    const body = build({ messages: [{ role: 'user', content: [{ type: 'file', file: { filename: 'a.pdf', file_data: 'data:application/pdf;base64,JVBERi0x' } }] }] });
    expect(body.messages).toEqual([{ role: 'user', content: [{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0x' } }] }]);
    const err = rejection({ messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }] }] });
    expect(err.code).toBe('unsupported_parameter');
    expect(err.param).toBe('messages[0].content[0]');
  });
});

describe('tools', () => {
  const tool = {
    type: 'function' as const,
    function: {
      name: 'test_tool',
      description: 'A test tool',
      parameters: { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', properties: { count: { type: 'number' } }, required: ['count'], additionalProperties: false },
    },
  };
  const call = (id: string, count: number) => ({ id, type: 'function' as const, function: { name: 'test_tool', arguments: JSON.stringify({ count }) } });

  it('assistant tool calls and parallel tool results: the recorded follow-up request', () => {
    const fixture = recorded('messages-parallel-tool-results-followup');
    const body = build({
      max_tokens: 1000,
      messages: [
        { role: 'user', content: 'Use the test_tool with count 1, then use it again with count 2' },
        {
          role: 'assistant',
          content: "I'll use the test_tool twice as requested - first with count 1, then with count 2.",
          tool_calls: [call('toolu_01L8GVQapA1HmggQcrwboukH', 1), call('toolu_01J5Fvzxu7DP1Uh59c1kr5JD', 2)],
        },
        { role: 'tool', tool_call_id: 'toolu_01L8GVQapA1HmggQcrwboukH', content: 'Called with 1' },
        { role: 'tool', tool_call_id: 'toolu_01J5Fvzxu7DP1Uh59c1kr5JD', content: [{ type: 'text', text: 'Called with 2' }] },
      ],
      tools: [tool],
    });
    expect(body.messages).toEqual(fixture.messages);
    // The recording spells out Anthropic's default tool type; the gateway leaves it implicit.
    expect(body.tools).toEqual(fixture.tools.map(({ type: _type, ...rest }: Record<string, unknown>) => rest));
    expect(body.max_tokens).toBe(1000);
  });

  it('tool results come first in their user turn, before a user message that follows', () => {
    const body = build({
      messages: [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: null, tool_calls: [{ id: 't1', type: 'function', function: { name: 'f', arguments: '' } }] },
        { role: 'tool', tool_call_id: 't1', content: 'done' },
        { role: 'user', content: 'Now summarise.' },
      ],
      tools: [{ type: 'function', function: { name: 'f' } }],
    });
    expect(body.messages).toEqual([
      { role: 'user', content: 'go' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'f', input: {} }] },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 't1', content: 'done' },
          { type: 'text', text: 'Now summarise.' },
        ],
      },
    ]);
    expect(body.tools).toEqual([{ name: 'f', input_schema: { type: 'object', properties: {} } }]);
  });

  it('tool_choice forms, parallel_tool_calls: false and strict', () => {
    const tools = [{ type: 'function' as const, function: { name: 'f', parameters: { type: 'object' }, strict: true } }];
    const choice = (tool_choice: ChatCompletionRequest['tool_choice'], parallel?: boolean) =>
      build({ tools, tool_choice, ...(parallel === undefined ? {} : { parallel_tool_calls: parallel }) }).tool_choice;
    expect(choice(undefined)).toBeUndefined();
    expect(choice('auto')).toEqual({ type: 'auto' });
    expect(choice('required')).toEqual({ type: 'any' });
    expect(choice('none')).toEqual({ type: 'none' });
    expect(choice({ type: 'function', function: { name: 'f' } })).toEqual({ type: 'tool', name: 'f' });
    expect(choice(undefined, false)).toEqual({ type: 'auto', disable_parallel_tool_use: true });
    expect(choice('required', false)).toEqual({ type: 'any', disable_parallel_tool_use: true });
    expect(choice('none', false)).toEqual({ type: 'none' });
    expect(choice('auto', true)).toEqual({ type: 'auto' });
    expect(build({ tools }).tools).toEqual([{ name: 'f', input_schema: { type: 'object' }, strict: true }]);
    // Without tools there is nothing to choose from.
    expect(build({ tool_choice: 'none' })).not.toHaveProperty('tool_choice');
  });

  it('tool-call arguments that are not JSON are the client’s mistake', () => {
    const err = rejection({ messages: [{ role: 'assistant', content: null, tool_calls: [{ id: 't', type: 'function', function: { name: 'f', arguments: '{oops' } }] }] });
    expect(err.code).toBe('invalid_request');
    expect(err.param).toBe('messages[0].tool_calls[0].function.arguments');
  });
});

describe('parameters', () => {
  it('sampling, stop, user and streaming', () => {
    expect(build({ temperature: 0.2, top_p: 0.9, stop: ['END', ''], user: 'u-1', stream: true, top_k: 5 })).toEqual({
      model: 'claude-3-opus-latest',
      max_tokens: 4096,
      messages: [{ role: 'user', content: 'hi' }],
      temperature: 0.2,
      top_p: 0.9,
      top_k: 5,
      stop_sequences: ['END'],
      metadata: { user_id: 'u-1' },
      stream: true,
    });
    expect(build({ stop: 'x', safety_identifier: 'hash-1' })).toMatchObject({ stop_sequences: ['x'], metadata: { user_id: 'hash-1' } });
  });

  it('response_format json_schema is structured output; text is nothing; json_object is unsupported', () => {
    const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false };
    expect(build({ response_format: { type: 'json_schema', json_schema: { name: 'city', schema, strict: true } } })).toEqual({
      model: 'claude-3-opus-latest',
      max_tokens: 4096,
      messages: [{ role: 'user', content: 'hi' }],
      output_config: { format: { type: 'json_schema', schema } },
    });
    expect(build({ response_format: { type: 'text' } })).not.toHaveProperty('output_config');
    const err = rejection({ response_format: { type: 'json_object' } });
    expect(err).toMatchObject({ code: 'unsupported_parameter', param: 'response_format', status: 400 });
    expect(rejection({ response_format: { type: 'json_schema', json_schema: { name: 'x' } } }).code).toBe('invalid_request');
  });

  it('reasoning_effort is output_config.effort; thinking passes through; service_tier maps', () => {
    expect(build({ reasoning_effort: 'minimal', thinking: { type: 'enabled', budget_tokens: 1024 }, service_tier: 'default' })).toMatchObject({
      output_config: { effort: 'low' },
      thinking: { type: 'enabled', budget_tokens: 1024 },
      service_tier: 'standard_only',
    });
    expect(rejection({ reasoning_effort: 'none' }).param).toBe('reasoning_effort');
    expect(rejection({ service_tier: 'flex' }).param).toBe('service_tier');
  });

  it('the recorded extended-thinking request', () => {
    const fixture = recorded('stream-thinking');
    const body = build(
      { model: 'claude-sonnet-4-0', stream: true, messages: [{ role: 'user', content: [{ type: 'text', text: 'How do I cross the street?' }] }], thinking: { type: 'enabled', budget_tokens: 1024 } },
      {},
      { model: 'claude-sonnet-4-0', stream: true },
    );
    expect(body).toEqual(fixture);
  });

  it('promptCaching adds a top-level cache_control', () => {
    expect(build({}, { promptCaching: '5m' }).cache_control).toEqual({ type: 'ephemeral' });
    expect(build({}, { promptCaching: '1h' }).cache_control).toEqual({ type: 'ephemeral', ttl: '1h' });
    expect(build({}, { promptCaching: false })).not.toHaveProperty('cache_control');
  });

  it.each([
    ['seed', { seed: 7 }],
    ['n', { n: 2 }],
    ['presence_penalty', { presence_penalty: 0.5 }],
    ['frequency_penalty', { frequency_penalty: -1 }],
    ['logprobs', { logprobs: true }],
    ['top_logprobs', { top_logprobs: 3 }],
    ['logit_bias', { logit_bias: { '50256': -100 } }],
    ['modalities', { modalities: ['text', 'audio'] }],
    ['prediction', { prediction: { type: 'content', content: 'x' } }],
    ['tools[0]', { tools: [{ type: 'custom', custom: { name: 'x' } }] }],
  ])('%s cannot be honoured: a 400 naming it, or dropped when allowed', (param, request) => {
    const err = rejection(request as Partial<ChatCompletionRequest>);
    expect(err).toBeInstanceOf(GatewayError);
    expect(err).toMatchObject({ code: 'unsupported_parameter', status: 400, param });
    expect(err.message).toContain(`'${param}'`);

    const call = callOf(request as Partial<ChatCompletionRequest>, { dropUnsupportedParams: true });
    const body = buildAnthropicRequest(call, { maxTokens: 4096 });
    expect(body).toEqual({ model: 'claude-3-opus-latest', max_tokens: 4096, messages: [{ role: 'user', content: 'hi' }] });
    expect(call.log.info).toHaveBeenCalledWith(expect.objectContaining({ param }), `dropped unsupported parameter '${param}'`);
  });

  it('no-op values of unsupported parameters are accepted', () => {
    const body = build({ n: 1, logprobs: false, top_logprobs: 0, presence_penalty: 0, frequency_penalty: 0, logit_bias: {}, modalities: ['text'], seed: null });
    expect(body).toEqual({ model: 'claude-3-opus-latest', max_tokens: 4096, messages: [{ role: 'user', content: 'hi' }] });
  });
});
