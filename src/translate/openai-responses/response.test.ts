/** Recorded OpenAI Responses answers → chat.completion (what the gateway reads of a passed-through answer). */
import { describe, expect, it } from 'vitest';
import { UpstreamError } from '../../providers/upstream-error.ts';
import { responsesToCompletion } from './response.ts';
import { loadFixture } from 'switchyard-gateway/kit/testing';

const FIXTURES = new URL('../../../test/fixtures/openai/', import.meta.url);
const call = { provider: 'oai', model: 'gpt-x', requestId: 'req_1' };

describe('Responses answer → chat completion', () => {
  it('hosted web search: the message text, hosted tool items passed over, cached and reasoning tokens', () => {
    const body = loadFixture(FIXTURES, 'responses-web-search').json;
    const c = responsesToCompletion(body, call);
    expect(c.id).toBe(body.id);
    expect(c.model).toBe('gpt-5-mini-2025-08-07');
    expect(c.choices[0].message.content).toBe(body.output.find((o: { type: string }) => o.type === 'message').content[0].text);
    expect(c.choices[0].message.tool_calls).toBeUndefined();
    expect(c.choices[0].finish_reason).toBe('stop');
    expect(c.usage).toEqual({
      prompt_tokens: 19681,
      completion_tokens: 3773,
      total_tokens: 23454,
      prompt_tokens_details: { cached_tokens: 3712 },
      completion_tokens_details: { reasoning_tokens: 3136 },
    });
  });

  it('reasoning with encrypted content: the summary as reasoning_content, the text as content', () => {
    const c = responsesToCompletion(loadFixture(FIXTURES, 'responses-reasoning-encrypted').json, call);
    expect(c.choices[0].message.reasoning_content).toContain('Reporting final result');
    expect(c.choices[0].message.content).toContain('Final result: 570');
    expect(c.usage?.completion_tokens_details).toEqual({ reasoning_tokens: 128 });
  });

  it('function calls, incomplete and failed responses', () => {
    const called = responsesToCompletion({ id: 'resp_1', model: 'm', status: 'completed', output: [{ type: 'function_call', call_id: 'call_9', name: 'f', arguments: '{}' }] }, call);
    expect(called.choices[0]).toMatchObject({ finish_reason: 'tool_calls', message: { content: null, tool_calls: [{ id: 'call_9', type: 'function', function: { name: 'f', arguments: '{}' } }] } });
    const cut = responsesToCompletion({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, output: [] }, call);
    expect(cut.choices[0].finish_reason).toBe('length');
    expect(cut.model).toBe('gpt-x');
    expect(() => responsesToCompletion({ status: 'failed', error: { code: 'rate_limit_exceeded', message: 'slow down' }, output: [] }, call)).toThrow(UpstreamError);
    expect(() => responsesToCompletion({ choices: [] }, call)).toThrow(/no output array/);
  });
});
