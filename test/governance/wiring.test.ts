/**
 * Governance meeting routing: a key refused by its limits must not change how the gateway
 * treats the target for everyone else.
 */
import { describe, expect, it } from 'vitest';
import { FakeClock, fakeUpstream, useTestGateway } from 'switchyard-gateway/kit/testing';
import { chat } from './helpers.ts';

const LIMITED = 'sk-wiring-limited-0123456789';
const FINE = 'sk-wiring-fine-0123456789';
const ok = {
  status: 200,
  body: {
    id: 'c',
    object: 'chat.completion',
    created: 1,
    model: 'm',
    choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 },
  },
};
const upstream = fakeUpstream(() => ok);
const clock = new FakeClock();

const t = useTestGateway(
  () =>
    [
      'keys:',
      `  - { name: limited, key: ${LIMITED}, models: ["*"], limits: { rpm: 1 } }`,
      `  - { name: fine, key: ${FINE}, models: ["*"] }`,
      'providers:',
      `  up: { plugin: openai, baseUrl: "${upstream.url}/v1" }`,
      'models:',
      '  m: { retry: { attempts: 1 }, cooldown: { failures: 1, windowMs: 60000, durationMs: 1000 }, targets: [{ provider: up, model: house-model, price: { input: 1, output: 1 } }] }',
    ].join('\n'),
  { upstreams: [upstream], clock },
);

const ask = (key: string) => chat(t.url, key, { model: 'm', messages: [{ role: 'user', content: 'probe' }] });

describe('a refused key and the half-open probe', () => {
  // A refused key must not keep the half-open probe it was handed (src/stages/retry.ts releases it).
  it('a key over its rpm at the moment the cooldown ends does not keep the target out of rotation', async () => {
    expect((await ask(LIMITED)).status).toBe(200); // uses the key's one request this minute
    upstream.setHandler(() => ({ status: 500, body: { error: { message: 'boom', type: 'server_error', param: null, code: null } } }));
    expect((await ask(FINE)).status).toBe(502); // one failure opens the breaker for 1 s
    upstream.setHandler(() => ok);
    clock.advance(1_500); // the cooldown is over: the next request is the probe
    expect((await ask(LIMITED)).status).toBe(429); // refused by its own rpm while holding the probe
    const after = await ask(FINE);
    expect(after.body.error?.message).toBeUndefined();
    expect(after.status).toBe(200);
  });
});
