import { describe, expect, it } from 'vitest';
import type { ChatCompletionRequest } from '../openai-types.ts';
import { cacheKey, canonical } from './key.ts';

const body = (b: Record<string, unknown>) => b as unknown as ChatCompletionRequest;

describe('cacheKey', () => {
  const base = { model: 'a', messages: [{ role: 'user', content: 'hi' }], temperature: 0 };

  it('is the same for the same request in any key order, transport fields aside', () => {
    const a = cacheKey('key:k', 'alias', body(base));
    expect(cacheKey('key:k', 'alias', body({ temperature: 0, messages: [{ content: 'hi', role: 'user' }], model: 'a' }))).toBe(a);
    expect(cacheKey('key:k', 'alias', body({ ...base, user: 'u', metadata: { run: 1 }, stream_options: { include_usage: true }, store: true, extra: undefined }))).toBe(a);
    expect(a).toMatch(/^[\w-]{43}$/);
  });

  it('differs when anything the model reads differs, and across scopes, aliases and stream or not', () => {
    const a = cacheKey('key:k', 'alias', body(base));
    const others = [
      cacheKey('key:other', 'alias', body(base)),
      cacheKey('key:k', 'other', body(base)),
      cacheKey('key:k', 'alias', body({ ...base, stream: true })),
      cacheKey('key:k', 'alias', body({ ...base, temperature: 0.1 })),
      cacheKey('key:k', 'alias', body({ ...base, messages: [{ role: 'user', content: 'hi ' }] })),
      cacheKey('key:k', 'alias', body({ ...base, messages: [{ role: 'system', content: 'hi' }] })),
      cacheKey('key:k', 'alias', body({ ...base, tools: [] })),
    ];
    expect(new Set([a, ...others]).size).toBe(others.length + 1);
  });

  it('canonical JSON sorts keys at every depth, escapes strings as JSON does, and skips undefined fields', () => {
    expect(canonical({ b: [{ y: 1, x: 'q"\u2028é' }, null, true], a: { d: undefined, c: 1.5 } })).toBe('{"a":{"c":1.5},"b":[{"x":"q\\"\u2028é","y":1},null,true]}');
    expect(JSON.parse(canonical({ z: 'a\nb', y: [1, { b: 2, a: 1 }] }))).toEqual({ z: 'a\nb', y: [1, { a: 1, b: 2 }] });
  });
});
