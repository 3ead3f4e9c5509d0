/** Recorded Gemini answers → OpenAI chat completions. */
import { describe, expect, it } from 'vitest';
import type { ProviderCall } from '../../plugin-api.ts';
import { UpstreamError } from '../../providers/upstream-error.ts';
import { finishReason, logprobsOf, geminiToCompletion, usageOf } from './response.ts';
import { expectValid, loadFixture } from 'switchyard-gateway/kit/testing';

/** This provider's recorded payloads. */
const FIXTURES = new URL('../../../test/fixtures/gemini/', import.meta.url);

const call = { provider: 'g', model: 'gemini-x', requestId: 'req_test' } as ProviderCall;
const answer = (name: string) => loadFixture(FIXTURES, name).json;

function complete(body: unknown) {
  const r = geminiToCompletion(body, call);
  expectValid('CreateChatCompletionResponse', r);
  return r;
}

describe('recorded answers', () => {
  it('plain text: id from responseId, model from modelVersion, usage', () => {
    const r = complete(answer('generate-multi-turn'));
    expect(r).toMatchObject({ id: 'chatcmpl-qtSfaKjsCcmagbUPt96I0QI', object: 'chat.completion', model: 'gemini-2.0-flash' });
    expect(r.choices).toEqual([
      {
        index: 0,
        message: { role: 'assistant', content: "While the story doesn't explicitly have a title, a fitting title could be:\n\n**The Clockmaker's Silence**\n", refusal: null },
        logprobs: null,
        finish_reason: 'stop',
      },
    ]);
    expect(r.usage).toEqual({ prompt_tokens: 145, completion_tokens: 27, total_tokens: 172, prompt_tokens_details: { cached_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 0 } });
  });

  it('thinking tokens are completion tokens, itemised as reasoning_tokens', () => {
    const r = complete(answer('generate-system-instruction'));
    expect(r.choices[0].message.content).toBe('low');
    expect(r.usage).toMatchObject({ prompt_tokens: 9, completion_tokens: 21, total_tokens: 30, completion_tokens_details: { reasoning_tokens: 20 } });
  });

  it('a thought-summary part goes to reasoning_content, not content; MAX_TOKENS → length', () => {
    const r = complete(answer('generate-thinking-thought-part'));
    expect(r.choices[0].message.content).toBe('');
    expect(r.choices[0].message.reasoning_content).toMatch(/^\*\*Breaking Down the Sum of Natural Numbers\*\*/);
    expect(r.choices[0].finish_reason).toBe('length');
    expect(r.usage).toMatchObject({ prompt_tokens: 17, completion_tokens: 19, total_tokens: 36 });
    expect(complete(answer('generate-basic-max-tokens')).choices[0].finish_reason).toBe('length');
  });

  it('a function call: generated id, arguments as a JSON string, content null, finish tool_calls', () => {
    const r = complete(answer('generate-function-call'));
    expect(r.choices[0]).toEqual({
      index: 0,
      message: {
        role: 'assistant',
        content: null,
        refusal: null,
        tool_calls: [{ id: 'call_req_test_0', type: 'function', function: { name: 'customDivide', arguments: '{"denominator":2,"numerator":10}' } }],
      },
      logprobs: null,
      finish_reason: 'tool_calls',
    });
  });

  it("a function call's thoughtSignature rides along in extra_content.google", () => {
    const fixture = answer('generate-function-call-thought-signature');
    const r = complete(fixture);
    expect(r.choices[0].message.tool_calls).toEqual([
      {
        id: 'call_req_test_0',
        type: 'function',
        function: { name: 'concatStringFunction', arguments: '{"firstString":"hello","secondString":"world"}' },
        extra_content: { google: { thought_signature: fixture.candidates[0].content.parts[0].thoughtSignature } },
      },
    ]);
  });

  it("the usage total equals Google's totalTokenCount in every recorded answer", () => {
    for (const name of [
      'generate-basic-max-tokens',
      'generate-function-call',
      'generate-function-call-thought-signature',
      'generate-function-response-followup',
      'generate-multi-turn',
      'generate-system-instruction',
      'generate-thinking-thought-part',
      'image-input-base64',
    ]) {
      const body = answer(name);
      expect(complete(body).usage!.total_tokens, name).toBe(body.usageMetadata.totalTokenCount);
    }
  });
});

describe('edge cases', () => {
  it('a prompt blocked before generation: one empty content_filter choice, prompt tokens counted', () => {
    const r = complete({ promptFeedback: { blockReason: 'PROHIBITED_CONTENT' }, usageMetadata: { promptTokenCount: 5, totalTokenCount: 5 }, modelVersion: 'gemini-2.0-flash', responseId: 'x' });
    expect(r.choices).toEqual([{ index: 0, message: { role: 'assistant', content: '', refusal: null }, logprobs: null, finish_reason: 'content_filter' }]);
    expect(r.usage).toMatchObject({ prompt_tokens: 5, completion_tokens: 0, total_tokens: 5 });
  });

  it('several candidates (n) become choices in index order; a safety stop is content_filter', () => {
    const r = complete({
      candidates: [
        { index: 1, content: { role: 'model', parts: [{ text: 'partial' }] }, finishReason: 'SAFETY' },
        { index: 0, content: { role: 'model', parts: [{ text: 'A' }, { text: 'B' }] }, finishReason: 'STOP' },
      ],
    });
    expect(r.choices.map((c) => [c.index, c.message.content, c.finish_reason])).toEqual([
      [0, 'AB', 'stop'],
      [1, 'partial', 'content_filter'],
    ]);
  });

  it('Vertex createTime sets created; cached and tool-use prompt tokens are counted', () => {
    const r = complete({
      candidates: [{ content: { parts: [{ text: 'ok' }] }, finishReason: 'STOP' }],
      createTime: '2025-10-24T07:45:46.904785Z',
      usageMetadata: { promptTokenCount: 100, cachedContentTokenCount: 80, toolUsePromptTokenCount: 4, candidatesTokenCount: 2 },
    });
    expect(r.created).toBe(1761291946);
    expect(r.id).toBe('chatcmpl-req_test');
    expect(r.model).toBe('gemini-x');
    expect(r.usage).toEqual({ prompt_tokens: 104, completion_tokens: 2, total_tokens: 106, prompt_tokens_details: { cached_tokens: 80 }, completion_tokens_details: { reasoning_tokens: 0 } });
  });

  it('logprobsResult → logprobs.content with top alternatives and UTF-8 bytes', () => {
    const logprobsResult = {
      topCandidates: [
        {
          candidates: [
            { token: 'Hé', logProbability: -0.1 },
            { token: 'Hi', logProbability: -2.5 },
          ],
        },
        { candidates: [{ token: '!' }] },
      ],
      chosenCandidates: [{ token: 'Hé', tokenId: 5, logProbability: -0.1 }, { token: '!' }],
    };
    const r = complete({ candidates: [{ content: { parts: [{ text: 'Hé!' }] }, finishReason: 'STOP', logprobsResult }] });
    expect(r.choices[0].logprobs).toEqual({
      content: [
        {
          token: 'Hé',
          logprob: -0.1,
          bytes: [72, 195, 169],
          top_logprobs: [
            { token: 'Hé', logprob: -0.1, bytes: [72, 195, 169] },
            { token: 'Hi', logprob: -2.5, bytes: [72, 105] },
          ],
        },
        { token: '!', logprob: 0, bytes: [33], top_logprobs: [{ token: '!', logprob: 0, bytes: [33] }] },
      ],
      refusal: null,
    });
    expect(logprobsOf(undefined)).toBeNull();
  });

  it('an error envelope in a 200 body is an UpstreamError with its status; a body without candidates is malformed', () => {
    const err = (() => {
      try {
        geminiToCompletion({ error: { code: 503, message: 'overloaded', status: 'UNAVAILABLE' } }, call);
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(UpstreamError);
    expect(err).toMatchObject({ status: 503, kind: 'http', failure: { message: 'overloaded', code: 'UNAVAILABLE' } });
    expect(() => geminiToCompletion({ usageMetadata: {} }, call)).toThrow(SyntaxError);
    expect(() => geminiToCompletion([], call)).toThrow(SyntaxError);
    expect(() => geminiToCompletion('nope', call)).toThrow(SyntaxError);
  });
});

describe('finish reasons and usage', () => {
  it('maps every reason Google documents', () => {
    expect(finishReason(undefined, false)).toBeNull();
    expect(finishReason('FINISH_REASON_UNSPECIFIED', false)).toBeNull();
    expect(finishReason('STOP', false)).toBe('stop');
    expect(finishReason('STOP', true)).toBe('tool_calls');
    expect(finishReason('MAX_TOKENS', true)).toBe('length');
    for (const r of ['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'LANGUAGE', 'IMAGE_SAFETY']) expect(finishReason(r, false)).toBe('content_filter');
    for (const r of ['OTHER', 'MALFORMED_FUNCTION_CALL', 'SOMETHING_NEW']) expect(finishReason(r, false)).toBe('stop');
  });

  it('missing counts are zeros (proto3 JSON leaves zeros out)', () => {
    expect(usageOf(undefined)).toEqual({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, prompt_tokens_details: { cached_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 0 } });
  });
});
