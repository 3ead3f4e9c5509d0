import { describe, expect, it } from 'vitest';
import type { ChatCompletionRequest } from '../../openai-types.ts';
import { cacheControlOf, promptCacheKeyOf } from './cache-control.ts';

const marked = { type: 'ephemeral' as const };
const chat = (messages: ChatCompletionRequest['messages'], tools?: ChatCompletionRequest['tools']): ChatCompletionRequest => ({ model: 'm', messages, ...(tools ? { tools } : {}) });
const system = { role: 'system' as const, content: 'You are terse.', cache_control: marked };

describe('promptCacheKeyOf', () => {
  it('is the same on every turn that keeps the first marked prefix, whatever is marked after it', () => {
    const turn1 = chat([system, { role: 'user', content: 'a', cache_control: marked }]);
    const turn2 = chat([system, { role: 'user', content: 'a' }, { role: 'assistant', content: 'b' }, { role: 'user', content: 'c', cache_control: marked }]);
    const key = promptCacheKeyOf(turn1, 'sk-one');
    expect(key).toMatch(/^swy-[0-9a-f]{40}$/);
    expect(promptCacheKeyOf(turn2, 'sk-one')).toBe(key);
  });

  it('differs by caller and by prefix; none without a marker or a credential; the credential is not in it', () => {
    const request = chat([system, { role: 'user', content: 'a' }]);
    const key = promptCacheKeyOf(request, 'sk-one');
    expect(promptCacheKeyOf(request, 'sk-two')).not.toBe(key);
    expect(promptCacheKeyOf(chat([{ ...system, content: 'Other.' }]), 'sk-one')).not.toBe(key);
    expect(promptCacheKeyOf(chat([{ role: 'user', content: 'a' }]), 'sk-one')).toBeUndefined();
    expect(promptCacheKeyOf(request, undefined)).toBeUndefined();
    expect(key).not.toContain('sk-one');
  });

  it('a marked tool ends the prefix at the tools', () => {
    const tool = { type: 'function' as const, function: { name: 'f' }, cache_control: marked };
    const a = promptCacheKeyOf(chat([{ role: 'user', content: 'a' }], [tool]), 'k');
    const b = promptCacheKeyOf(chat([{ role: 'user', content: 'b' }], [tool]), 'k');
    expect(a).toBe(b);
  });
});

describe('cacheControlOf', () => {
  it('reads ephemeral with an optional 5m/1h ttl and names a wrong one', () => {
    expect(cacheControlOf({ cache_control: { type: 'ephemeral', ttl: '1h' } }, 'tools[0]')).toEqual({ type: 'ephemeral', ttl: '1h' });
    expect(cacheControlOf({}, 'x')).toBeUndefined();
    expect(() => cacheControlOf({ cache_control: { type: 'ephemeral', ttl: '2h' } }, 'tools[0]')).toThrow(/tools\[0\]\.cache_control\.ttl/);
    expect(() => cacheControlOf({ cache_control: { type: 'x' } }, '')).toThrow(/'cache_control\.type'/);
  });
});
