/** Fix-ups that make every answer a valid OpenAI object: ids, model, nullable fields, usage totals. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ChatCompletion, ChatCompletionChunk, Usage } from '../openai-types.ts';
import type { ProviderCall } from '../plugin-api.ts';
import { chunkIsNormal, normalizeChunk, normalizeCompletion, normalizeUsage } from './normalize.ts';

/** Only the fields normalize reads. */
const call = { model: 'upstream-model-1', requestId: 'req_42' } as ProviderCall;

const NOW_MS = 1_700_000_123_456;
afterEach(() => {
  vi.restoreAllMocks();
});

/** A completion as a lax upstream might send it (fields missing), typed loosely on purpose. */
const completion = (fields: Record<string, unknown>) => fields as unknown as ChatCompletion;
const chunk = (fields: Record<string, unknown>) => fields as unknown as ChatCompletionChunk;

describe('normalizeCompletion', () => {
  it('fills object, model, id and created when missing, and returns the same object', () => {
    vi.spyOn(Date, 'now').mockReturnValue(NOW_MS);
    const body = completion({ choices: [] });
    const out = normalizeCompletion(body, call);
    expect(out).toBe(body);
    expect(out).toEqual({ object: 'chat.completion', model: 'upstream-model-1', id: 'chatcmpl-req_42', created: 1_700_000_123, choices: [] });
  });

  it('keeps the model, id and created the upstream sent, but always sets object', () => {
    const body = completion({ id: 'msg_01', object: 'message', created: 1, model: 'claude-x-2025', choices: [] });
    expect(normalizeCompletion(body, call)).toEqual({ id: 'msg_01', object: 'chat.completion', created: 1, model: 'claude-x-2025', choices: [] });
  });

  it('an empty model or id counts as missing; created: 0 is kept', () => {
    const out = normalizeCompletion(completion({ id: '', model: '', created: 0, choices: [] }), call);
    expect(out.id).toBe('chatcmpl-req_42');
    expect(out.model).toBe('upstream-model-1');
    expect(out.created).toBe(0);
  });

  it('a created that is not a number is replaced', () => {
    vi.spyOn(Date, 'now').mockReturnValue(NOW_MS);
    expect(normalizeCompletion(completion({ created: '2024-01-01', choices: [] }), call).created).toBe(1_700_000_123);
  });

  it('system_fingerprint: null is removed; a string is kept', () => {
    const nulled = normalizeCompletion(completion({ system_fingerprint: null, choices: [] }), call);
    expect('system_fingerprint' in nulled).toBe(false);
    expect(normalizeCompletion(completion({ system_fingerprint: 'fp_1', choices: [] }), call).system_fingerprint).toBe('fp_1');
  });

  it('adds the required-but-nullable choice and message fields as null', () => {
    const out = normalizeCompletion(completion({ choices: [{ index: 0, message: { role: 'assistant' } }] }), call);
    expect(out.choices[0]).toEqual({ index: 0, logprobs: null, finish_reason: null, message: { role: 'assistant', content: null, refusal: null } });
  });

  it('leaves values that are present alone, null included', () => {
    const choice = { index: 0, logprobs: { content: [] }, finish_reason: 'stop', message: { role: 'assistant', content: 'hi', refusal: 'no', tool_calls: [] } };
    const out = normalizeCompletion(completion({ choices: [structuredClone(choice)] }), call);
    expect(out.choices[0]).toEqual(choice);
    const nulls = normalizeCompletion(completion({ choices: [{ index: 0, logprobs: null, finish_reason: null, message: { role: 'assistant', content: null } }] }), call);
    expect(nulls.choices[0]).toEqual({ index: 0, logprobs: null, finish_reason: null, message: { role: 'assistant', content: null, refusal: null } });
  });

  it('every choice is fixed, and a choice without a message does not break it', () => {
    const out = normalizeCompletion(completion({ choices: [{ index: 0 }, { index: 1, message: { role: 'assistant', content: 'b' } }] }), call);
    expect(out.choices).toEqual([
      { index: 0, logprobs: null, finish_reason: null },
      { index: 1, logprobs: null, finish_reason: null, message: { role: 'assistant', content: 'b', refusal: null } },
    ]);
  });

  it('completes usage and keeps extra upstream fields', () => {
    const out = normalizeCompletion(completion({ choices: [], usage: { prompt_tokens: 10, completion_tokens: 5, prompt_tokens_details: { cached_tokens: 4 } }, service_tier: 'default' }), call);
    expect(out.usage).toEqual({ prompt_tokens: 10, completion_tokens: 5, total_tokens: 15, prompt_tokens_details: { cached_tokens: 4 } });
    expect(out.service_tier).toBe('default');
  });

  it('no usage stays no usage', () => {
    expect('usage' in normalizeCompletion(completion({ choices: [] }), call)).toBe(false);
  });
});

describe('normalizeChunk', () => {
  it('fills object, model, id, created and choices when missing, and returns the same object', () => {
    vi.spyOn(Date, 'now').mockReturnValue(NOW_MS);
    const c = chunk({});
    const out = normalizeChunk(c, call);
    expect(out).toBe(c);
    expect(out).toEqual({ object: 'chat.completion.chunk', model: 'upstream-model-1', id: 'chatcmpl-req_42', created: 1_700_000_123, choices: [] });
  });

  it('keeps what the upstream sent and fixes a wrong object', () => {
    const c = chunk({ id: 'x', object: 'chat.completion', created: 5, model: 'gpt-x', choices: [{ index: 0, delta: { content: 'a' }, finish_reason: null }] });
    expect(normalizeChunk(c, call)).toEqual({ id: 'x', object: 'chat.completion.chunk', created: 5, model: 'gpt-x', choices: [{ index: 0, delta: { content: 'a' }, finish_reason: null }] });
  });

  it('a non-string id is replaced; a non-array choices becomes []', () => {
    expect(normalizeChunk(chunk({ id: 12, choices: [] }), call).id).toBe('chatcmpl-req_42');
    expect(normalizeChunk(chunk({ choices: null }), call).choices).toEqual([]);
  });

  it('does not add nullable fields to deltas (chunks are left as translated)', () => {
    const out = normalizeChunk(chunk({ choices: [{ index: 0, delta: {} }] }), call);
    expect(out.choices).toEqual([{ index: 0, delta: {} }]);
  });

  it('system_fingerprint: null is removed', () => {
    expect('system_fingerprint' in normalizeChunk(chunk({ system_fingerprint: null, choices: [] }), call)).toBe(false);
  });

  it('completes a usage chunk; usage: null stays null', () => {
    expect(normalizeChunk(chunk({ choices: [], usage: { prompt_tokens: 3, completion_tokens: 4 } }), call).usage).toEqual({ prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 });
    expect(normalizeChunk(chunk({ choices: [], usage: null }), call).usage).toBeNull();
  });
});

describe('normalizeUsage', () => {
  const usage = (fields: Record<string, unknown>) => fields as unknown as Usage;

  it('total = prompt + completion when the total is missing', () => {
    expect(normalizeUsage(usage({ prompt_tokens: 12, completion_tokens: 30 }))).toEqual({ prompt_tokens: 12, completion_tokens: 30, total_tokens: 42 });
  });

  it('missing counts become 0', () => {
    expect(normalizeUsage(usage({ completion_tokens: 8 }))).toEqual({ prompt_tokens: 0, completion_tokens: 8, total_tokens: 8 });
    expect(normalizeUsage(usage({ prompt_tokens: 8 }))).toEqual({ prompt_tokens: 8, completion_tokens: 0, total_tokens: 8 });
    expect(normalizeUsage(usage({}))).toEqual({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });
  });

  it('a total the upstream sent is kept as sent (it may count reasoning or cached tokens differently)', () => {
    expect(normalizeUsage(usage({ prompt_tokens: 1, completion_tokens: 2, total_tokens: 10 })).total_tokens).toBe(10);
    expect(normalizeUsage(usage({ prompt_tokens: 1, completion_tokens: 2, total_tokens: 0 })).total_tokens).toBe(0);
  });

  it('mutates and returns the same object, keeping details', () => {
    const u = usage({ prompt_tokens: 1, completion_tokens: 1, completion_tokens_details: { reasoning_tokens: 1 } });
    expect(normalizeUsage(u)).toBe(u);
    expect(u).toEqual({ prompt_tokens: 1, completion_tokens: 1, total_tokens: 2, completion_tokens_details: { reasoning_tokens: 1 } });
  });
});

describe('chunkIsNormal', () => {
  const normal = { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content: 'hi' }, finish_reason: null }] };
  const variants: Record<string, Record<string, unknown>> = {
    'a complete chunk': normal,
    'with a system_fingerprint': { ...normal, system_fingerprint: 'fp_1' },
    'with usage: null': { ...normal, usage: null },
    'with complete usage': { ...normal, choices: [], usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 } },
    'another object': { ...normal, object: 'chat.completion' },
    'no model': { ...normal, model: '' },
    'a numeric id': { ...normal, id: 7 },
    'no created': { ...normal, created: undefined },
    'no choices': { ...normal, choices: undefined },
    'system_fingerprint: null': { ...normal, system_fingerprint: null },
    'usage without a total': { ...normal, usage: { prompt_tokens: 3, completion_tokens: 4 } },
    'usage without prompt tokens': { ...normal, usage: { completion_tokens: 4, total_tokens: 4 } },
    'usage without completion tokens': { ...normal, usage: { prompt_tokens: 3, total_tokens: 3 } },
  };

  // The writer sends a normal chunk's upstream text in place of the chunk: that is only right when normalizing would not change it.
  it.each(Object.entries(variants))('agrees with normalizeChunk: %s', (_name, fields) => {
    const text = JSON.stringify(fields);
    const normalized = JSON.stringify(normalizeChunk(chunk(JSON.parse(text)), call));
    expect(chunkIsNormal(chunk(JSON.parse(text)))).toBe(normalized === text);
  });

  it('tells the normal chunks from the others', () => {
    const normals = Object.entries(variants)
      .filter(([, fields]) => chunkIsNormal(chunk(JSON.parse(JSON.stringify(fields)))))
      .map(([name]) => name);
    expect(normals).toEqual(['a complete chunk', 'with a system_fingerprint', 'with usage: null', 'with complete usage']);
  });
});
