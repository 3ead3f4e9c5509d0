/** Recorded Anthropic answers → OpenAI chat completions. */
import { describe, expect, it } from 'vitest';
import type { ProviderCall } from '../../plugin-api.ts';
import { UpstreamError } from '../../providers/upstream-error.ts';
import { finishReason, anthropicToCompletion, usageOf } from './response.ts';
import { loadFixture } from 'switchyard-gateway/kit/testing';

/** This provider's recorded payloads. */
const FIXTURES = new URL('../../../test/fixtures/anthropic/', import.meta.url);

const answer = (name: string) => loadFixture(FIXTURES, name).json;
const call = { provider: 'claude', model: 'claude-x', requestId: 'req_1' } as ProviderCall;

describe('anthropicToCompletion', () => {
  it('text: content, the reported model and id, stop', () => {
    const c = anthropicToCompletion(answer('messages-system-prompt'), call);
    expect(c).toMatchObject({
      id: 'msg_01Fg1JVgvCYUHWsxrj9GkpEv',
      object: 'chat.completion',
      model: 'claude-3-opus-20240229',
      choices: [{ index: 0, message: { role: 'assistant', content: 'The capital of France is Paris.', refusal: null }, logprobs: null, finish_reason: 'stop' }],
      usage: { prompt_tokens: 20, completion_tokens: 10, total_tokens: 30, prompt_tokens_details: { cached_tokens: 0 } },
    });
    expect(c.choices[0].message).not.toHaveProperty('tool_calls');
  });

  it('parallel tool use: text kept, every tool_use a call with JSON arguments', () => {
    const c = anthropicToCompletion(answer('messages-parallel-tool-use'), call);
    expect(c.choices[0].finish_reason).toBe('tool_calls');
    expect(c.choices[0].message.content).toBe("I'll use the test_tool twice as requested - first with count 1, then with count 2.");
    expect(c.choices[0].message.tool_calls).toEqual([
      { id: 'toolu_01L8GVQapA1HmggQcrwboukH', type: 'function', function: { name: 'test_tool', arguments: '{"count":1}' } },
      { id: 'toolu_01J5Fvzxu7DP1Uh59c1kr5JD', type: 'function', function: { name: 'test_tool', arguments: '{"count":2}' } },
    ]);
  });

  it('tool use alone: content null', () => {
    const c = anthropicToCompletion(
      { id: 'm', model: 'claude-x', content: [{ type: 'tool_use', id: 't', name: 'f', input: {} }], stop_reason: 'tool_use', usage: { input_tokens: 1, output_tokens: 2 } },
      call,
    );
    expect(c.choices[0].message.content).toBeNull();
    expect(c.choices[0].message.tool_calls![0].function.arguments).toBe('{}');
  });

  it('prompt-cache usage: read and written tokens count as prompt tokens, read ones itemised', () => {
    const c = anthropicToCompletion(answer('messages-usage-cache-read'), call);
    expect(c.usage).toEqual({ prompt_tokens: 3 + 1111 + 418, completion_tokens: 33, total_tokens: 3 + 1111 + 418 + 33, prompt_tokens_details: { cached_tokens: 1111, cache_write_tokens: 418 } });
  });

  it('thinking is reasoning_content, and with its signature and the redacted block thinking_blocks; unknown blocks are left out', () => {
    const c = anthropicToCompletion(
      {
        id: 'm',
        model: 'claude-x',
        content: [
          { type: 'thinking', thinking: 'Let me see.', signature: 'sig' },
          { type: 'redacted_thinking', data: 'xxx' },
          { type: 'text', text: 'Yes.' },
          { type: 'server_tool_use', id: 's', name: 'code_execution', input: {} },
        ],
        stop_reason: 'end_turn',
        usage: { input_tokens: 1, output_tokens: 2 },
      },
      call,
    );
    expect(c.choices[0].message).toEqual({
      role: 'assistant',
      content: 'Yes.',
      refusal: null,
      reasoning_content: 'Let me see.',
      thinking_blocks: [
        { type: 'thinking', thinking: 'Let me see.', signature: 'sig' },
        { type: 'redacted_thinking', data: 'xxx' },
      ],
    });
  });

  it('an answer without a content array is malformed; an error body is an upstream error', () => {
    expect(() => anthropicToCompletion({ content: 'not a list' }, call)).toThrow(SyntaxError);
    expect(() => anthropicToCompletion(null, call)).toThrow(SyntaxError);
    const err = (() => {
      try {
        anthropicToCompletion({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }, call);
      } catch (e) {
        return e as UpstreamError;
      }
    })();
    expect(err).toBeInstanceOf(UpstreamError);
    expect(err).toMatchObject({ status: 529, retryable: true, failure: { message: 'Overloaded', code: 'overloaded_error' } });
  });
});

describe('finishReason and usageOf', () => {
  it.each([
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['pause_turn', 'stop'],
    ['max_tokens', 'length'],
    ['model_context_window_exceeded', 'length'],
    ['tool_use', 'tool_calls'],
    ['refusal', 'content_filter'],
    ['something_new', 'stop'],
  ])('%s → %s', (stop, finish) => expect(finishReason(stop)).toBe(finish));

  it('null stop reason → null; missing usage fields count as zero', () => {
    expect(finishReason(null)).toBeNull();
    expect(usageOf({ output_tokens: 4, cache_read_input_tokens: null })).toEqual({ prompt_tokens: 0, completion_tokens: 4, total_tokens: 4, prompt_tokens_details: { cached_tokens: 0 } });
  });
});
