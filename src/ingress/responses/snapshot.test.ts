import { describe, expect, it } from 'vitest';
import { snapshot } from './snapshot.ts';

describe('snapshot', () => {
  it('copies plain data deeply, as structuredClone does', () => {
    const item = { type: 'message', n: 1.5, ok: true, none: null, missing: undefined, content: [{ text: 'a', annotations: [{ url: 'u' }], logprobs: [] }] };
    const copy = snapshot(item);
    expect(copy).toStrictEqual(structuredClone(item));
    expect(Object.keys(copy)).toEqual(Object.keys(item));
    item.content[0].text = 'changed';
    item.content[0].annotations.push({ url: 'v' });
    expect(copy.content[0]).toStrictEqual({ text: 'a', annotations: [{ url: 'u' }], logprobs: [] });
  });

  it('keeps a __proto__ key of parsed JSON as data', () => {
    const args = JSON.parse('{"__proto__":{"polluted":true},"q":"x"}');
    const copy = snapshot(args);
    expect(JSON.stringify(copy)).toBe('{"__proto__":{"polluted":true},"q":"x"}');
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('returns primitives as they are', () => {
    expect(snapshot('text')).toBe('text');
    expect(snapshot(3)).toBe(3);
    expect(snapshot(null)).toBeNull();
  });
});
