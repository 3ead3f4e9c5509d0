/** The OpenAI-compatible body: the client's request with the target's model; `developerRole: false` sends developer messages as system, reported. */
import { describe, expect, it } from 'vitest';
import type { Drop } from 'switchyard-gateway';
import { callFactory } from 'switchyard-gateway/kit/testing';
import { buildChatBody } from './index.ts';

const callOf = callFactory({ provider: 'vllm', model: 'llama-3.3-70b' });
const messages = [
  { role: 'developer' as const, content: 'Be terse.' },
  { role: 'user' as const, content: 'hi' },
];

describe('buildChatBody', () => {
  it('keeps the developer role by default, without a copy of the messages', () => {
    const call = callOf({ messages, a_new_param: 1 });
    const body = buildChatBody(call);
    expect(body.messages).toBe(call.request.messages);
    expect(body).toMatchObject({ model: 'llama-3.3-70b', a_new_param: 1 });
  });

  it('developerRole: false sends developer messages as system and reports each, leaving the request as it was', () => {
    const drops: Drop[] = [];
    const call = callOf({ messages }, { drop: (d) => drops.push(d) });
    const body = buildChatBody(call, { developerRole: false });
    expect(body.messages.map((m) => m.role)).toEqual(['system', 'user']);
    expect(body.messages[0].content).toBe('Be terse.');
    expect(call.request.messages[0].role).toBe('developer');
    expect(drops).toEqual([{ field: 'messages[0].role', what: 'developer', reason: 'sent as system: vllm has no developer role (developerRole: false)' }]);
  });
});
