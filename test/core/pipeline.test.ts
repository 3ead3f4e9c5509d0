/** Custom providers and stages loaded by path, and the order the pipeline runs them in. */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import path from 'node:path';
import { expectValid, startTestGateway, type TestGateway } from 'switchyard-gateway/kit/testing';
import { configYaml, ROOT } from '../helpers/repo.ts';

const trace = ((globalThis as { __switchyardTrace?: string[] }).__switchyardTrace ??= []);
const plugins = path.join(ROOT, 'test/fixtures/plugins');
let t: TestGateway;

beforeAll(async () => {
  t = await startTestGateway(
    configYaml({
      providers: `  echo: { plugin: ${plugins}/echo-provider.ts, prefix: "echo: " }`,
      models: '  parrot: { targets: [{ provider: echo, model: parrot-1 }] }',
      pipeline: `
  - auth
  - validate
  - { stage: ${plugins}/trace-stage.ts, options: { label: A, block: forbidden } }
  - route
  - { stage: ${plugins}/trace-stage.ts, options: { label: B } }
  - retry
  - transform-response
  - log`,
    }),
  );
});
afterAll(() => t.close());
beforeEach(() => {
  trace.length = 0;
});

async function settled(count: number) {
  const deadline = Date.now() + 2000;
  while (trace.length < count && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
}

describe('a custom provider loaded by path', () => {
  it('serves plain and streamed completions through the official SDK', async () => {
    const r = await t.client().chat.completions.create({ model: 'parrot', messages: [{ role: 'user', content: 'hello world' }] });
    expectValid('CreateChatCompletionResponse', r);
    expect(r.choices[0].message.content).toBe('echo: hello world');
    expect(r.model).toBe('parrot-1-v2');

    const stream = await t.client().chat.completions.create({ model: 'parrot', stream: true, messages: [{ role: 'user', content: 'one two three' }] });
    let text = '';
    for await (const chunk of stream) {
      expectValid('CreateChatCompletionStreamResponse', chunk);
      text += chunk.choices[0]?.delta.content ?? '';
    }
    expect(text).toBe('echo: one two three');
  });
});

describe('pipeline order', () => {
  it('runs stages in order on the way in, in reverse on the way back, and onResponse hooks after', async () => {
    const { response } = await t
      .client()
      .chat.completions.create({ model: 'parrot', messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    expect(response.headers.get('x-trace-a')).toBe('seen');
    expect(response.headers.get('x-trace-b')).toBe('seen');
    await settled(6);
    expect(trace).toEqual([
      'A:in key=dev route=-', // after auth, before route
      'B:in key=dev route=parrot', // after route
      'B:out response=completion', // after transform-response, on the way back
      'A:out response=completion',
      'A:done status=200',
      'B:done status=200',
    ]);
  });

  it('a stage can refuse a request with an OpenAI-shaped 400, and later stages do not run', async () => {
    const err = (await t
      .client()
      .chat.completions.create({ model: 'parrot', messages: [{ role: 'user', content: 'this is forbidden' }] })
      .catch((e: unknown) => e)) as InstanceType<typeof OpenAI.BadRequestError>;
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.message).toContain('blocked by policy');
    expect(err.param).toBe('messages');
    await settled(3);
    expect(trace).toEqual(['A:in key=dev route=-', 'A:done status=400', 'B:done status=400']);
  });
});
