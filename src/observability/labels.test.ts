import { describe, expect, it } from 'vitest';
import { GatewayError } from '../errors.ts';
import type { ModelRoute } from '../plugin-api.ts';
import type { ExchangeView } from '../pipeline/exchange.ts';
import { codeLabel, droppedFieldLabel, keyLabel, modelLabel, NONE, OTHER, providerLabel, refusalLabels, statusLabel, targetLabel, teamLabel } from './labels.ts';

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
    // Cast on purpose: a model the types exclude, as a client may send.
    expect(modelLabel(ctx({ body: { model: 42 as never, messages: [] } }), models)).toBe(OTHER);
    // Cast on purpose: no body at all, which the types exclude.
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

  it('name a refusal by the limit and whose rule it is, from the context or the error code', () => {
    expect(refusalLabels(ctx())).toBeUndefined();
    expect(refusalLabels(ctx({ refusal: { scope: 'key:a', kind: 'tokens' } }))).toEqual({ reason: 'tpm', scope: 'key' });
    expect(refusalLabels(ctx({ refusal: { scope: 'team:t', kind: 'requests' } }))).toEqual({ reason: 'rpm', scope: 'team' });
    expect(refusalLabels(ctx({ refusal: { scope: 'team:t', kind: 'budget' } }))).toEqual({ reason: 'budget', scope: 'team' });
    expect(refusalLabels(ctx({ refusal: { scope: 'target:p/m', kind: 'concurrency' } }))).toEqual({ reason: 'concurrency', scope: 'target' });
    // Cast on purpose: a limit kind governance may add later.
    expect(refusalLabels(ctx({ refusal: { scope: 'key:a', kind: 'surprise' as never } }))).toEqual({ reason: 'limit', scope: 'key' });
    expect(refusalLabels(ctx({ error: new GatewayError('invalid_api_key', 'who?') }))).toEqual({ reason: 'invalid_key', scope: 'key' });
    expect(refusalLabels(ctx({ error: new GatewayError('model_not_allowed', 'no') }))).toEqual({ reason: 'model_not_allowed', scope: 'key' });
    expect(refusalLabels(ctx({ error: new GatewayError('limits_unavailable', 'down') }))).toEqual({ reason: 'state_unavailable', scope: 'key' });
  });

  it('count every target skipped at its limit as a target refusal, an upstream 429 as none', () => {
    const skipped = { provider: 'p', model: 'm', status: 0, outcome: 'skipped' as const, durationMs: 0 };
    const upstream429 = { ...skipped, status: 429, outcome: 'error' as const };
    const limited = (type: string) => new GatewayError('rate_limit_exceeded', 'full', { type });
    expect(refusalLabels(ctx({ attempts: [skipped, skipped], error: limited('tokens') }))).toEqual({ reason: 'tpm', scope: 'target' });
    expect(refusalLabels(ctx({ attempts: [skipped], error: limited('requests') }))).toEqual({ reason: 'limit', scope: 'target' });
    expect(refusalLabels(ctx({ attempts: [skipped], error: new GatewayError('model_not_allowed', 'unpriced') }))).toEqual({ reason: 'unpriced', scope: 'key' });
    expect(refusalLabels(ctx({ attempts: [skipped, upstream429], error: limited('requests') }))).toBeUndefined();
    expect(refusalLabels(ctx({ error: limited('requests') }))).toBeUndefined();
  });
});

describe('droppedFieldLabel', () => {
  it('is the top-level name of a known field, else _other', () => {
    expect(droppedFieldLabel('tools[8]')).toBe('tools');
    expect(droppedFieldLabel('thinking.type')).toBe('thinking');
    expect(droppedFieldLabel('context_management')).toBe('context_management');
    expect(droppedFieldLabel('messages[2].content[0]')).toBe('messages');
    expect(droppedFieldLabel('a_field_from_next_year')).toBe(OTHER);
  });
});
