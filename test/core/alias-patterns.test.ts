/**
 * Alias patterns: a client release's new default model name (`claude-opus-5-5`, `gpt-6.2-codex`)
 * finds its alias without an edit. Exact aliases first, then patterns in file order, `*` as the
 * default; keys scope patterns like aliases; the answer still names the model that answered.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEV_KEY, failureOf, logLineFor, startTestGateway, type TestGateway } from 'switchyard-gateway/kit/testing';

let t: TestGateway;
const SCOPED = 'sk-scoped-0123456789';
const hello = [{ role: 'user' as const, content: 'Hello' }];

beforeAll(async () => {
  t = await startTestGateway(`keys:
  - { name: dev, key: ${DEV_KEY} }
  - { name: claude-only, key: ${SCOPED}, models: ["claude-*"] }
providers:
  mock: { plugin: mock }
models:
  claude-*: { targets: [{ provider: mock, model: mock-claude }] }
  claude-haiku-exact: { targets: [{ provider: mock, model: mock-haiku }] }
  gpt-*-codex: { targets: [{ provider: mock, model: mock-codex }] }
  "*": { targets: [{ provider: mock, model: mock-default }] }
`);
});
afterAll(() => t.close());

describe('alias patterns', () => {
  it('route a new model name to the first matching pattern, and the answer names the model that answered', async () => {
    const { data, response } = await t.client().chat.completions.create({ model: 'claude-opus-5-5', messages: hello }).withResponse();
    expect(data.model).toBe('mock-claude');
    const line = await logLineFor(t, response.headers.get('x-request-id')!);
    expect(line).toMatchObject({ model: 'claude-opus-5-5', provider: 'mock', upstreamModel: 'mock-claude' });
    expect((await t.client().chat.completions.create({ model: 'gpt-6.2-codex', messages: hello })).model).toBe('mock-codex');
  });

  it('an exact alias wins over a pattern listed before it; "*" is the default', async () => {
    expect((await t.client().chat.completions.create({ model: 'claude-haiku-exact', messages: hello })).model).toBe('mock-haiku');
    expect((await t.client().chat.completions.create({ model: 'some-future-model', messages: hello })).model).toBe('mock-default');
  });

  it('a key scoped to a pattern may use the names it covers and nothing else', async () => {
    expect((await t.client(SCOPED).chat.completions.create({ model: 'claude-sonnet-9', messages: hello })).model).toBe('mock-claude');
    expect(await failureOf(t.client(SCOPED).chat.completions.create({ model: 'gpt-6.2-codex', messages: hello }))).toMatchObject({ status: 403, code: 'model_not_allowed' });
  });

  it('GET /v1/models lists the patterns; a name a pattern covers is a model', async () => {
    const ids = (await t.client().models.list()).data.map((m) => m.id);
    expect(ids).toEqual(['claude-*', 'claude-haiku-exact', 'gpt-*-codex', '*']);
    expect(await t.client().models.retrieve('claude-opus-5-5')).toMatchObject({ id: 'claude-opus-5-5', owned_by: 'mock' });
  });
});

it('without a default pattern an unknown model is still a 404', async () => {
  const g = await startTestGateway(`keys:
  - { name: dev, key: ${DEV_KEY} }
providers:
  mock: { plugin: mock }
models:
  claude-*: { targets: [{ provider: mock, model: mock-claude }] }
`);
  try {
    expect(await failureOf(g.client().chat.completions.create({ model: 'gpt-4o', messages: hello }))).toMatchObject({ status: 404, code: 'model_not_found' });
  } finally {
    await g.close();
  }
});
