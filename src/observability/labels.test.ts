import { describe, expect, it } from 'vitest';
import { GatewayError } from '../errors.ts';
import type { ModelRoute } from '../plugin-api.ts';
import type { ExchangeView } from '../pipeline/exchange.ts';
import { codeLabel, keyLabel, modelLabel, NONE, OTHER, providerLabel, refusedLimit, statusLabel, targetLabel, teamLabel } from './labels.ts';

const ctx = (fields: Partial<ExchangeView> = {}): ExchangeView => ({
  ...{ id: 'req_1', operation: 'chat', ingress: 'chat', startedAt: 0, headers: {}, body: { model: 'x', messages: [] }, key: undefined, route: undefined, attempt: undefined, attempts: [] },
  ...{ timing: { upstreamMs: 0 }, usage: undefined, costUsd: undefined, upstreamModel: undefined, status: undefined, error: undefined, streamError: undefined, refusal: undefined, traceId: undefined },
  ...fields,
});
const models = new Map([['chat', { name: 'chat' } as ModelRoute]]);

describe('metric labels', () => {
  it('name the model by its alias, known aliases before routing, anything else _other', () => {
    expect(modelLabel(ctx({ route: { name: 'routed' } as ModelRoute }), models)).toBe('routed');
    expect(modelLabel(ctx({ body: { model: 'chat', messages: [] } }), models)).toBe('chat');
    expect(modelLabel(ctx({ body: { model: 'gpt-made-up', messages: [] } }), models)).toBe(OTHER);
    expect(modelLabel(ctx({ body: { model: 42 as never, messages: [] } }), models)).toBe(OTHER);
    expect(modelLabel(ctx({ body: undefined as never }), undefined)).toBe(OTHER);
  });

  it('say _none when there is no key, team or provider', () => {
    expect([keyLabel(ctx()), teamLabel(ctx()), providerLabel(ctx())]).toEqual([NONE, NONE, NONE]);
    const key = { name: 'ci', team: 'platform', allows: () => true };
    expect([keyLabel(ctx({ key })), teamLabel(ctx({ key }))]).toEqual(['ci', 'platform']);
    expect(targetLabel({ provider: 'openai', model: 'gpt-4o' })).toBe('openai/gpt-4o');
  });

  it('give the catalogue code of the error, the in-stream one first, ok when none', () => {
    expect(codeLabel(ctx())).toBe('ok');
    expect(codeLabel(ctx({ error: new GatewayError('timeout', 'slow') }))).toBe('timeout');
    expect(codeLabel(ctx({ error: new GatewayError('timeout', 'slow'), streamError: new GatewayError('upstream_error', 'cut') }))).toBe('upstream_error');
  });

  it('write the status as a number, 0 when none was sent', () => {
    expect(statusLabel(ctx({ status: 499 }))).toBe('499');
    expect(statusLabel(ctx())).toBe('0');
    expect(statusLabel(ctx({ status: 1234 }))).toBe(OTHER);
  });

  it("count a refusal by the key's or team's limit only", () => {
    expect(refusedLimit(ctx())).toBeUndefined();
    expect(refusedLimit(ctx({ refusal: { scope: 'key:a', kind: 'tokens' } }))).toBe('tokens');
    expect(refusedLimit(ctx({ refusal: { scope: 'team:t', kind: 'surprise' as never } }))).toBe(OTHER);
    expect(refusedLimit(ctx({ error: new GatewayError('rate_limit_exceeded', 'upstream said so') }))).toBeUndefined();
  });
});
