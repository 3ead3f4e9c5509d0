import { describe, expect, it } from 'vitest';
import { callFactory, loadFixture } from 'switchyard-gateway/kit/testing';
import { anthropicToCompletion } from '../../translate/anthropic/response.ts';
import type { ChatCompletion } from '../../openai-types.ts';
import { chatToMessage } from './response.ts';
import { shapeOf, without } from './testing.ts';

const OPENAI = new URL('../../../test/fixtures/openai/', import.meta.url);
const ANTHROPIC = new URL('../../../test/fixtures/anthropic/', import.meta.url);
const request = { model: 'my-alias', max_tokens: 100, messages: [] };

/** Usage fields of real messages this translation does not produce: no chat answer says them. */
const NOT_PRODUCED = ['usage.cache_creation', 'usage.service_tier', 'usage.inference_geo'];

function completion(message: Record<string, unknown>, extra: Partial<ChatCompletion['choices'][number]> = {}, usage?: ChatCompletion['usage']): ChatCompletion {
  return {
    id: 'chatcmpl-abc',
    object: 'chat.completion',
    created: 1,
    model: 'gpt-x',
    choices: [{ index: 0, message: { role: 'assistant', content: null, ...message }, finish_reason: 'stop', ...extra }],
    usage,
  };
}

describe('chatToMessage: recorded chat completions', () => {
  it('chat-basic → a text message shaped like a recorded Anthropic message', () => {
    const message = chatToMessage(loadFixture(OPENAI, 'chat-basic').json, request);
    expect(message).toEqual({
      id: 'msg_Bu8vBIrB8kIWKRyTcpEEPncjhHtMU',
      type: 'message',
      role: 'assistant',
      model: 'gpt-4o-2024-08-06',
      content: [{ type: 'text', text: 'The capital of France is Paris.' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: 14, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 7 },
    });
    const real = loadFixture(ANTHROPIC, 'messages-system-prompt').json;
    expect(shapeOf(message)).toEqual(shapeOf(without(real, NOT_PRODUCED)));
  });

  it('chat-tool-call → a tool_use block with the call id and parsed input, stop_reason tool_use', () => {
    const message = chatToMessage(loadFixture(OPENAI, 'chat-tool-call').json, request);
    expect(message.content).toEqual([{ type: 'tool_use', id: 'call_iXFttys57ap0o16JSlC8yhYo', name: 'get_user_country', input: {} }]);
    expect(message.stop_reason).toBe('tool_use');
  });

  it('text then tool calls has the shape of a recorded Anthropic tool-use message', () => {
    const message = chatToMessage(
      completion(
        { content: 'Let me check.', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'test_tool', arguments: '{"value":"test"}' } }] },
        { finish_reason: 'tool_calls' },
        {
          prompt_tokens: 415,
          completion_tokens: 76,
          total_tokens: 491,
        },
      ),
      request,
    );
    const real = loadFixture(ANTHROPIC, 'messages-tool-use').json;
    expect(shapeOf(message)).toEqual(shapeOf(without(real, NOT_PRODUCED)));
  });
});

describe('chatToMessage: content', () => {
  it('reasoning_content (or reasoning) → a thinking block ahead of the text, with an empty signature', () => {
    expect(chatToMessage(completion({ content: 'Yes.', reasoning_content: 'Let me think.' }), request).content).toEqual([
      { type: 'thinking', thinking: 'Let me think.', signature: '' },
      { type: 'text', text: 'Yes.' },
    ]);
    expect(chatToMessage(completion({ content: 'Yes.', reasoning: 'Hmm.' }), request).content[0]).toEqual({ type: 'thinking', thinking: 'Hmm.', signature: '' });
  });

  it('a refusal → its text, stop_reason refusal', () => {
    const message = chatToMessage(completion({ content: null, refusal: "I can't help with that." }), request);
    expect(message.content).toEqual([{ type: 'text', text: "I can't help with that." }]);
    expect(message.stop_reason).toBe('refusal');
  });

  it('no content → no blocks', () => {
    expect(chatToMessage(completion({ content: '' }), request).content).toEqual([]);
  });

  it('arguments that are not JSON → input {}; a JSON value that is not an object → { value }', () => {
    const calls = [
      { id: 'c1', type: 'function' as const, function: { name: 'f', arguments: '{"cut": "in the mid' } },
      { id: 'c2', type: 'function' as const, function: { name: 'g', arguments: '[1,2]' } },
      { id: 'c3', type: 'function' as const, function: { name: 'h', arguments: '' } },
    ];
    expect(chatToMessage(completion({ tool_calls: calls }, { finish_reason: 'length' }), request).content.map((b) => (b.type === 'tool_use' ? b.input : b))).toEqual([{}, { value: [1, 2] }, {}]);
  });

  it('the id: chatcmpl- prefix replaced by msg_; a Messages id kept; none → a fresh msg_ id', () => {
    expect(chatToMessage({ ...completion({ content: 'x' }), id: 'msg_01abc' }, request).id).toBe('msg_01abc');
    expect(chatToMessage({ ...completion({ content: 'x' }), id: 'gen-123' }, request).id).toBe('msg_gen-123');
    expect(chatToMessage({ ...completion({ content: 'x' }), id: '' }, request).id).toMatch(/^msg_[0-9a-f]{32}$/);
  });

  it('the model that answered, else the requested one', () => {
    expect(chatToMessage(completion({ content: 'x' }), request).model).toBe('gpt-x');
    expect(chatToMessage({ ...completion({ content: 'x' }), model: '' }, request).model).toBe('my-alias');
  });
});

describe('chatToMessage: stop_reason', () => {
  it.each([
    ['stop', {}, 'end_turn', null],
    ['length', {}, 'max_tokens', null],
    ['tool_calls', {}, 'tool_use', null],
    ['function_call', {}, 'tool_use', null],
    ['content_filter', {}, 'refusal', null],
    [null, {}, 'end_turn', null],
    // vLLM and SGLang name the stop string that matched.
    ['stop', { stop_reason: 'END' }, 'stop_sequence', 'END'],
    ['stop', { stop_reason: 'OTHER' }, 'end_turn', null],
    ['stop', { stop_reason: 128001 }, 'end_turn', null],
  ])('finish_reason %s (%j) → %s', (finish, extra, stopReason, stopSequence) => {
    const message = chatToMessage(completion({ content: 'x' }, { finish_reason: finish as ChatCompletion['choices'][number]['finish_reason'], ...extra }), { ...request, stop_sequences: ['END'] });
    expect([message.stop_reason, message.stop_sequence]).toEqual([stopReason, stopSequence]);
  });

  it('stop with tool calls (some servers say so) → tool_use', () => {
    expect(chatToMessage(completion({ tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }] }), request).stop_reason).toBe('tool_use');
  });
});

describe('chatToMessage: usage', () => {
  const usageOf = (usage: ChatCompletion['usage']) => chatToMessage(completion({ content: 'x' }, {}, usage), request).usage;

  it('input_tokens exclude what was read from and written to the cache', () => {
    expect(usageOf({ prompt_tokens: 1532, completion_tokens: 33, total_tokens: 1565, prompt_tokens_details: { cached_tokens: 1111, cache_write_tokens: 418 } })).toEqual({
      input_tokens: 3,
      cache_creation_input_tokens: 418,
      cache_read_input_tokens: 1111,
      output_tokens: 33,
    });
  });

  it('reasoning tokens are output tokens (OpenAI counts them in completion_tokens, as Anthropic does)', () => {
    expect(usageOf(loadFixture(OPENAI, 'chat-reasoning-usage-details').json.usage)).toEqual({ input_tokens: 11, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 809 });
  });

  it('no usage → zeros; nonsense never goes negative', () => {
    expect(usageOf(undefined)).toEqual({ input_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 0 });
    expect(usageOf({ prompt_tokens: 5, completion_tokens: -1, total_tokens: 4, prompt_tokens_details: { cached_tokens: 9 } }).input_tokens).toBe(0);
  });
});

describe('chatToMessage over the anthropic plugin: a recorded message comes back as it was', () => {
  const callOf = callFactory({ provider: 'anthropic', model: 'claude-test' });

  it.each(['messages-tool-use', 'messages-parallel-tool-use', 'messages-system-prompt', 'messages-image-input-base64'])('%s', (name) => {
    const real = loadFixture(ANTHROPIC, name).json;
    const message = chatToMessage(anthropicToCompletion(real, callOf({})), request);
    expect(message).toEqual(without(real, NOT_PRODUCED));
  });

  it('messages-usage-cache-read: cache reads and writes come back as Anthropic counted them', () => {
    const real = loadFixture(ANTHROPIC, 'messages-usage-cache-read').json;
    const message = chatToMessage(anthropicToCompletion(real, callOf({})), request);
    expect(message.usage).toEqual({ input_tokens: 3, cache_creation_input_tokens: 418, cache_read_input_tokens: 1111, output_tokens: 33 });
  });
});
