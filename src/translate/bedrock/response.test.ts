/** Recorded Converse answers → OpenAI chat completions. */
import { describe, expect, it } from 'vitest';
import type { ProviderCall } from '../../plugin-api.ts';
import { finishReason, converseToCompletion, usageOf } from './response.ts';
import { loadFixture } from 'switchyard-gateway/kit/testing';

/** This provider's recorded payloads. */
const FIXTURES = new URL('../../../test/fixtures/bedrock/', import.meta.url);

const call = { provider: 'aws', model: 'us.amazon.nova-micro-v1:0', requestId: 'req_1' } as ProviderCall;
const answer = (name: string) => loadFixture(FIXTURES, name).json;

describe('converseToCompletion', () => {
  it('text: the target model, a generated id, finish stop, usage', () => {
    const r = converseToCompletion(answer('converse-basic-system'), call);
    expect(r).toMatchObject({
      id: 'chatcmpl-req_1',
      object: 'chat.completion',
      model: 'us.amazon.nova-micro-v1:0',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: "Hello! How can I assist you today? Whether you have questions, need information, or just want to chat, I'm here to help.", refusal: null },
          logprobs: null,
          finish_reason: 'stop',
        },
      ],
      usage: { prompt_tokens: 7, completion_tokens: 30, total_tokens: 37, prompt_tokens_details: { cached_tokens: 0 } },
    });
    expect(typeof r.created).toBe('number');
  });

  it('text and a toolUse: content kept, the call with its input as the arguments string', () => {
    const r = converseToCompletion(answer('converse-tool-use'), call);
    expect(r.choices[0].finish_reason).toBe('tool_calls');
    expect(r.choices[0].message.content).toContain('<thinking> To determine the capital of France');
    expect(r.choices[0].message.tool_calls).toEqual([{ id: 'tooluse_Ze_bgl9CSqu8aJv7XD-_Dw', type: 'function', function: { name: 'get_capital', arguments: '{"country":"France"}' } }]);
  });

  it('only tool calls: content null; parallel calls in order', () => {
    const r = converseToCompletion(
      {
        output: { message: { role: 'assistant', content: [{ toolUse: { toolUseId: 'a', name: 'f', input: { n: 1 } } }, { toolUse: { toolUseId: 'b', name: 'f', input: {} } }] } },
        stopReason: 'tool_use',
        usage: { inputTokens: 1, outputTokens: 2, totalTokens: 3 },
      },
      call,
    );
    expect(r.choices[0].message.content).toBeNull();
    expect(r.choices[0].message.tool_calls!.map((c) => [c.id, c.function.arguments])).toEqual([
      ['a', '{"n":1}'],
      ['b', '{}'],
    ]);
  });

  it('reasoning blocks become reasoning_content', () => {
    const r = converseToCompletion(
      {
        output: { message: { role: 'assistant', content: [{ reasoningContent: { reasoningText: { text: 'Let me think.', signature: 'sig' } } }, { text: 'Hi!' }] } },
        stopReason: 'end_turn',
        usage: { inputTokens: 1, outputTokens: 2 },
      },
      call,
    );
    expect(r.choices[0].message).toMatchObject({ content: 'Hi!', reasoning_content: 'Let me think.' });
  });

  it('cache reads and writes count as prompt tokens; the legacy *Count names are understood', () => {
    const r = converseToCompletion(answer('converse-usage-cache-read'), call);
    expect(r.usage).toEqual({ prompt_tokens: 2 + 1322, completion_tokens: 5, total_tokens: 1329, prompt_tokens_details: { cached_tokens: 1322 } });
    expect(usageOf({ inputTokens: 10, cacheReadInputTokenCount: 100, cacheWriteInputTokenCount: 50, outputTokens: 1 })).toEqual({
      prompt_tokens: 160,
      completion_tokens: 1,
      total_tokens: 161,
      prompt_tokens_details: { cached_tokens: 100, cache_write_tokens: 50 },
    });
  });

  it('a body without output.message.content is malformed', () => {
    expect(() => converseToCompletion({ message: 'nope' }, call)).toThrow(SyntaxError);
    expect(() => converseToCompletion('text', call)).toThrow(SyntaxError);
  });
});

describe('finishReason', () => {
  it('maps every stopReason', () => {
    expect(['end_turn', 'stop_sequence', 'max_tokens', 'model_context_window_exceeded', 'tool_use', 'guardrail_intervened', 'content_filtered', 'malformed_model_output'].map(finishReason)).toEqual([
      'stop',
      'stop',
      'length',
      'length',
      'tool_calls',
      'content_filter',
      'content_filter',
      'stop',
    ]);
    expect(finishReason(undefined)).toBeNull();
  });
});
