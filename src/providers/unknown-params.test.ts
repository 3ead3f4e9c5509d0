import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { ChatCompletionRequest } from '../openai-types.ts';
import type { Drop, ProviderCall } from '../plugin-api.ts';
import { reportUnknownParams } from './unknown-params.ts';

function callWith(request: Record<string, unknown>): { call: ProviderCall; drops: Drop[] } {
  const drops: Drop[] = [];
  // A cast: a fake with only the fields reportUnknownParams reads.
  const call = {
    provider: 'claude',
    model: 'm',
    requestId: 'req_1',
    log: pino({ level: 'silent' }),
    request: { model: 'a', messages: [], ...request } as ChatCompletionRequest,
    drop: (d: Drop) => drops.push(d),
  } as unknown as ProviderCall;
  return { call, drops };
}

describe('reportUnknownParams', () => {
  it("reports what is neither OpenAI's nor read by the provider, in order", () => {
    const { call, drops } = callWith({ temperature: 0.2, store: true, top_k: 5, client_metadata: { a: 1 }, a_new_param: 1, unset: null });
    reportUnknownParams(call, { extraParams: ['top_k'] });
    expect(drops.map((d) => d.field)).toEqual(['client_metadata', 'a_new_param']);
    expect(drops[0].reason).toContain('claude');
  });

  it("an OpenAI-compatible server (extraParams: 'all') gets them all: nothing reported", () => {
    const { call, drops } = callWith({ a_new_param: 1 });
    reportUnknownParams(call, { extraParams: 'all' });
    expect(drops).toEqual([]);
  });

  it('a provider that declares nothing reports every parameter outside the chat set', () => {
    const { call, drops } = callWith({ top_k: 5 });
    reportUnknownParams(call, {});
    expect(drops.map((d) => d.field)).toEqual(['top_k']);
  });
});
