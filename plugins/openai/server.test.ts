/** `server`: OpenAI's own API or a compatible server, and what OpenAI's own API does not get. */
import { describe, expect, it } from 'vitest';
import type { Drop } from 'switchyard-gateway';
import { callFactory } from 'switchyard-gateway/kit/testing';
import { buildChatBody } from './index.ts';
import { serverOf } from './server.ts';

const callOf = callFactory({ provider: 'openai', model: 'gpt-5.2' });

describe('serverOf', () => {
  it('openai for api.openai.com, compatible elsewhere, unless set', () => {
    expect(serverOf({ baseUrl: 'https://api.openai.com/v1' })).toBe('openai');
    expect(serverOf({ baseUrl: 'http://127.0.0.1:8000/v1' })).toBe('compatible');
    expect(serverOf({ baseUrl: 'http://127.0.0.1:8000/v1', server: 'openai' })).toBe('openai');
    expect(serverOf({ baseUrl: 'https://api.openai.com/v1', server: 'compatible' })).toBe('compatible');
  });
});

describe('buildChatBody for OpenAI’s own API', () => {
  it('drops other servers’ sampling parameters, each reported, and leaves the client’s request as it was', () => {
    const drops: Drop[] = [];
    const call = callOf({ top_k: 40, min_p: 0.1, temperature: 0.5, a_new_param: 1 }, { drop: (d) => drops.push(d) });
    const body = buildChatBody(call, { server: 'openai' });
    expect(body).toEqual({ model: 'gpt-5.2', messages: [{ role: 'user', content: 'hi' }], temperature: 0.5, a_new_param: 1 });
    expect(drops.map((d) => `${d.field} (${d.what})`)).toEqual(['top_k (40)', 'min_p (0.1)']);
    expect(call.request.top_k).toBe(40);
  });

  it('a compatible server gets them as sent, nothing reported', () => {
    const drops: Drop[] = [];
    const body = buildChatBody(callOf({ top_k: 40, repetition_penalty: 1.1 }, { drop: (d) => drops.push(d) }), { server: 'compatible' });
    expect(body).toMatchObject({ top_k: 40, repetition_penalty: 1.1 });
    expect(drops).toEqual([]);
  });
});
