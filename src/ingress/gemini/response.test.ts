import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../errors.ts';
import type { ChatCompletion, ChatCompletionChunk } from '../../openai-types.ts';
import { embeddingRequestOf, embeddingsToGemini } from './embed.ts';
import { Drops } from './drops.ts';
import { googleErrorOf } from './errors.ts';
import { completionToGemini, usageMetadataOf } from './response.ts';
import { GeminiStreamWriter, JSON_ARRAY_FRAMING, SSE_FRAMING } from './stream.ts';

const usage = { prompt_tokens: 10, completion_tokens: 8, total_tokens: 18, prompt_tokens_details: { cached_tokens: 2 }, completion_tokens_details: { reasoning_tokens: 5 } };

describe('completionToGemini', () => {
  const completion: ChatCompletion = {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1,
    model: 'gpt-4o-2024',
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: 'Writing it.',
          reasoning_content: 'Plan.',
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'write_file', arguments: '{"path":"a"}' }, extra_content: { google: { thought_signature: 'sig' } } }],
        },
        finish_reason: 'tool_calls',
      },
      { index: 1, message: { role: 'assistant', content: 'Cut' }, finish_reason: 'length' },
    ],
    usage,
  };

  it('candidates with thoughts (when asked for), text and whole function calls; finish reasons, usage and model in Gemini terms', () => {
    expect(completionToGemini(completion, true)).toEqual({
      candidates: [
        {
          content: {
            role: 'model',
            parts: [{ text: 'Plan.', thought: true }, { text: 'Writing it.' }, { functionCall: { id: 'call_1', name: 'write_file', args: { path: 'a' } }, thoughtSignature: 'sig' }],
          },
          index: 0,
          finishReason: 'STOP',
        },
        { content: { role: 'model', parts: [{ text: 'Cut' }] }, index: 1, finishReason: 'MAX_TOKENS' },
      ],
      usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 3, thoughtsTokenCount: 5, cachedContentTokenCount: 2, totalTokenCount: 18 },
      modelVersion: 'gpt-4o-2024',
      responseId: 'chatcmpl-1',
    });
  });

  it('thoughts stay out unless includeThoughts; a filtered answer is SAFETY', () => {
    const r = completionToGemini({ ...completion, choices: [{ index: 0, message: { role: 'assistant', content: '', reasoning_content: 'x' }, finish_reason: 'content_filter' }] }, false);
    expect(r.candidates).toEqual([{ content: { role: 'model', parts: [] }, index: 0, finishReason: 'SAFETY' }]);
  });

  it('usage without details has no thought or cache counts', () => {
    expect(usageMetadataOf({ prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 })).toEqual({ promptTokenCount: 1, candidatesTokenCount: 2, totalTokenCount: 3 });
  });
});

describe('GeminiStreamWriter', () => {
  const chunk = (delta: Record<string, unknown>, finish: ChatCompletionChunk['choices'][number]['finish_reason'] = null): ChatCompletionChunk => ({
    id: 'chatcmpl-s',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'm-1',
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  const usageChunk: ChatCompletionChunk = { id: 'chatcmpl-s', object: 'chat.completion.chunk', created: 1, model: 'm-1', choices: [], usage };
  const events = (text: string) =>
    text
      .split('\r\n\r\n')
      .filter(Boolean)
      .map((e) => JSON.parse(e.replace(/^data: /, '')));

  it('text deltas as they come; argument fragments gathered into one functionCall sent with the finish and the usage', () => {
    const w = new GeminiStreamWriter({ includeThoughts: true, framing: SSE_FRAMING, requestId: 'req_1' });
    expect(w.started).toBe(false);
    let text = w.push(chunk({ role: 'assistant', reasoning_content: 'Hmm' }));
    expect(w.started).toBe(true);
    text += w.push(chunk({ content: 'Sure.' }));
    text += w.push(chunk({ tool_calls: [{ index: 0, id: 'call_9', type: 'function', function: { name: 'write_file', arguments: '{"pa' } }] }));
    text += w.push(chunk({ tool_calls: [{ index: 0, function: { arguments: 'th":"a"}' } }] }));
    const beforeFinish = events(text).length;
    text += w.push(chunk({}, 'tool_calls'));
    expect(events(text).length).toBe(beforeFinish);
    text += w.push(usageChunk) + w.end();
    expect(events(text)).toEqual([
      { candidates: [{ content: { role: 'model', parts: [{ text: 'Hmm', thought: true }] }, index: 0 }], modelVersion: 'm-1', responseId: 'chatcmpl-s' },
      { candidates: [{ content: { role: 'model', parts: [{ text: 'Sure.' }] }, index: 0 }], modelVersion: 'm-1', responseId: 'chatcmpl-s' },
      {
        candidates: [{ content: { role: 'model', parts: [{ functionCall: { id: 'call_9', name: 'write_file', args: { path: 'a' } } }] }, finishReason: 'STOP', index: 0 }],
        usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 3, thoughtsTokenCount: 5, cachedContentTokenCount: 2, totalTokenCount: 18 },
        modelVersion: 'm-1',
        responseId: 'chatcmpl-s',
      },
    ]);
  });

  it('a stream without a usage chunk still ends with its finish', () => {
    const w = new GeminiStreamWriter({ includeThoughts: false, framing: SSE_FRAMING, requestId: 'req_1' });
    const text = w.push(chunk({ content: 'Hi', reasoning_content: 'hidden' })) + w.push(chunk({}, 'stop')) + w.end();
    expect(events(text).map((e) => e.candidates)).toEqual([
      [{ content: { role: 'model', parts: [{ text: 'Hi' }] }, index: 0 }],
      [{ content: { role: 'model', parts: [] }, finishReason: 'STOP', index: 0 }],
    ]);
  });

  it('JSON array framing: one array, items as they come; an empty answer is []', () => {
    const w = new GeminiStreamWriter({ includeThoughts: false, framing: JSON_ARRAY_FRAMING, requestId: 'req_1' });
    expect(w.contentType).toContain('application/json');
    const text = w.push(chunk({ content: 'A' })) + w.push(chunk({ content: 'B' }, 'stop')) + w.push(usageChunk) + w.end();
    const items = JSON.parse(text);
    expect(items.map((i: { candidates?: Array<{ content: { parts: Array<{ text?: string }> } }> }) => i.candidates?.[0].content.parts[0]?.text)).toEqual(['A', 'B', undefined]);
    expect(new GeminiStreamWriter({ includeThoughts: false, framing: JSON_ARRAY_FRAMING, requestId: 'r' }).end()).toBe('[]');
  });

  it("with web search asked for: the searches and citations go as the candidate's groundingMetadata on its finishing event", () => {
    const w = new GeminiStreamWriter({ includeThoughts: false, webSearch: true, framing: SSE_FRAMING, requestId: 'req_1' });
    let text = w.push(chunk({ role: 'assistant', web_search_calls: [{ id: 'srvtoolu_1', query: 'ginza', status: 'completed', sources: [{ url: 'https://a.example/', title: 'A' }] }] }));
    text += w.push(chunk({ content: 'Café: ' })) + w.push(chunk({ content: 'Ginza reopened.' }));
    text += w.push(chunk({ annotations: [{ type: 'url_citation', url_citation: { start_index: 6, end_index: 21, url: 'https://a.example/', title: 'A' } }] }));
    text += w.push(chunk({}, 'stop')) + w.push(usageChunk) + w.end();
    const last = events(text).at(-1);
    expect(last.candidates[0].groundingMetadata).toEqual({
      webSearchQueries: ['ginza'],
      groundingChunks: [{ web: { uri: 'https://a.example/', title: 'A' } }],
      // 'Café: ' is 7 bytes (é is 2).
      groundingSupports: [{ segment: { startIndex: 7, endIndex: 22, text: 'Ginza reopened.' }, groundingChunkIndices: [0] }],
    });
    expect(last.candidates[0].finishReason).toBe('STOP');
  });

  it("a failure after the start is an error item in Google's envelope", () => {
    const w = new GeminiStreamWriter({ includeThoughts: false, framing: JSON_ARRAY_FRAMING, requestId: 'req_7' });
    const text = w.push(chunk({ content: 'A' })) + w.fail(new GatewayError('upstream_error', 'the provider failed'));
    expect(JSON.parse(text)[1]).toMatchObject({ error: { code: 502, status: 'INTERNAL', message: 'the provider failed' } });
  });
});

describe('googleErrorOf', () => {
  it('the canonical status name, the gateway code as ErrorInfo reason, the request id and the wait', () => {
    const limited = googleErrorOf(new GatewayError('rate_limit_exceeded', 'Slow down.', { headers: { 'retry-after': '3' } }), 'req_9');
    expect(limited).toEqual({
      status: 429,
      body: {
        error: {
          code: 429,
          message: 'Slow down.',
          status: 'RESOURCE_EXHAUSTED',
          details: [
            { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'RATE_LIMIT_EXCEEDED', domain: 'switchyard' },
            { '@type': 'type.googleapis.com/google.rpc.RequestInfo', requestId: 'req_9' },
            { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '3s' },
          ],
        },
      },
    });
    expect(googleErrorOf(new GatewayError('invalid_api_key', 'no'), 'r').body.error.status).toBe('UNAUTHENTICATED');
    expect(googleErrorOf(new GatewayError('model_not_allowed', 'no'), 'r').body.error.status).toBe('PERMISSION_DENIED');
    expect(googleErrorOf(new GatewayError('provider_unavailable', 'no'), 'r').body.error.status).toBe('UNAVAILABLE');
    expect(googleErrorOf(new GatewayError('invalid_request', 'bad', { param: 'contents' }), 'r').body.error.details).toContainEqual(expect.objectContaining({ metadata: { param: 'contents' } }));
  });
});

describe('embeddings', () => {
  it('a batch is one embeddings request (texts in order, dimensions, task type); the answer is in request order', () => {
    const drops = new Drops();
    const request = embeddingRequestOf(
      { requests: ['a', 'b'].map((text) => ({ model: 'models/e', content: { parts: [{ text }] }, outputDimensionality: 3, taskType: 'RETRIEVAL_QUERY', title: 'T' })) },
      'e',
      true,
      drops,
    );
    expect(request).toEqual({ model: 'e', input: ['a', 'b'], dimensions: 3, task_type: 'RETRIEVAL_QUERY' });
    expect(drops.list.map((d) => d.field)).toEqual(['requests[0].title', 'requests[1].title']);
    const answer = { object: 'list' as const, model: 'e', data: [1, 0].map((index) => ({ object: 'embedding' as const, index, embedding: [index] })), usage: { prompt_tokens: 1, total_tokens: 1 } };
    expect(embeddingsToGemini(answer, true)).toEqual({ embeddings: [{ values: [0] }, { values: [1] }] });
    expect(embeddingsToGemini(answer, false)).toEqual({ embedding: { values: [0] } });
  });

  it('a batch with mixed options, or a part that is not text, is a 400 naming it', () => {
    const req = (extra: Record<string, unknown>) => ({ content: { parts: [{ text: 'x' }] }, ...extra });
    expect(() => embeddingRequestOf({ requests: [req({ taskType: 'A' }), req({ taskType: 'B' })] }, 'e', true, new Drops())).toThrow(expect.objectContaining({ param: 'requests[1].taskType' }));
    expect(() => embeddingRequestOf({ content: { parts: [{ inlineData: {} }] } }, 'e', false, new Drops())).toThrow(expect.objectContaining({ param: 'content.parts[0]' }));
  });
});
