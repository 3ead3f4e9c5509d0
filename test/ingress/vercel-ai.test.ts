/**
 * The Vercel AI SDK as a client: `createOpenAI({ baseURL: <gateway>/v1 })`. Its default model
 * factory, `openai('…')`, speaks the Responses API (so the gateway's /v1/responses serves it, as
 * the log line's `ingress: 'responses'` shows); `openai.chat('…')` speaks chat completions. Served
 * by the offline mock: generateText, streamText, a tool loop, and a multi-turn conversation.
 */
import { describe, expect, it } from 'vitest';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, jsonSchema, stepCountIs, streamText, tool, type ModelMessage } from 'ai';
import { DEV_KEY, logLineFor, useTestGateway, type TestGateway } from 'switchyard-gateway/kit/testing';

const t = useTestGateway(
  () => `keys:
  - { name: dev, key: ${DEV_KEY} }
providers:
  mock: { plugin: mock }
models:
  demo: { targets: [{ provider: mock, model: mock-1 }] }
`,
);

/** The URLs the AI SDK called, in order, and the JSON bodies it sent. */
const called: string[] = [];
const sent: unknown[] = [];
const provider = () =>
  createOpenAI({
    baseURL: t.baseURL,
    apiKey: DEV_KEY,
    fetch: (url, init) => {
      called.push(String(url));
      if (typeof init?.body === 'string') sent.push(JSON.parse(init.body));
      return fetch(url, init);
    },
  });

/** The log line of the answer whose response headers these are. */
const lineOf = (gateway: TestGateway, headers: Record<string, string> | undefined) => logLineFor(gateway, headers?.['x-request-id'] ?? '(no x-request-id header)');

const weather = tool({
  description: 'Weather for a city',
  inputSchema: jsonSchema<{ city: string }>({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false }),
  execute: async ({ city }) => ({ city, celsius: 21 }),
});

describe('Vercel AI SDK (ai + @ai-sdk/openai)', () => {
  it("generateText with the default openai('demo') model goes through /v1/responses", async () => {
    called.length = 0;
    const result = await generateText({ model: provider()('demo'), prompt: 'Hello' });
    expect(called).toEqual([`${t.baseURL}/responses`]);
    expect(result.text).toContain('Hello from Switchyard');
    expect(result.finishReason).toBe('stop');
    expect(result.usage.inputTokens).toBeGreaterThan(0);
    expect(result.usage.outputTokens).toBeGreaterThan(0);
    expect(result.response.modelId).toBe('mock-1');
    const line = await lineOf(t, result.response.headers);
    expect(line).toMatchObject({ ingress: 'responses', model: 'demo', provider: 'mock', status: 200, stream: false });
  });

  it('streamText: the Responses event stream, read by the AI SDK', async () => {
    const result = streamText({ model: provider()('demo'), prompt: 'Hello' });
    const deltas: string[] = [];
    for await (const delta of result.textStream) deltas.push(delta);
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join('')).toContain('Hello from Switchyard');
    expect(await result.finishReason).toBe('stop');
    expect((await result.usage).outputTokens).toBeGreaterThan(0);
    const line = await lineOf(t, (await result.response).headers);
    expect(line).toMatchObject({ ingress: 'responses', model: 'demo', status: 200, stream: true });
  });

  it('openai.chat(…) speaks chat completions instead', async () => {
    called.length = 0;
    const result = await generateText({ model: provider().chat('demo'), prompt: 'Hello' });
    expect(called).toEqual([`${t.baseURL}/chat/completions`]);
    expect(result.text).toContain('Hello from Switchyard');
    const line = await lineOf(t, result.response.headers);
    expect(line).toMatchObject({ model: 'demo', status: 200 });
    expect(line.ingress).toBeUndefined();
  });

  it('a tool loop: the call, the executed result sent back as function_call_output, the final text', async () => {
    const result = await generateText({ model: provider()('demo'), prompt: 'Weather in Paris?', tools: { weather }, stopWhen: stepCountIs(3) });
    expect(result.steps).toHaveLength(2);
    expect(result.steps[0].toolCalls).toMatchObject([{ toolName: 'weather', input: { city: expect.any(String) } }]);
    expect(result.steps[0].toolResults).toMatchObject([{ toolName: 'weather', output: { celsius: 21 } }]);
    expect(result.text).toContain('Hello from Switchyard');
  });

  it('streamText with tools: the call and the result stream through, then the answer', async () => {
    const result = streamText({ model: provider()('demo'), prompt: 'Weather in Paris?', tools: { weather }, stopWhen: stepCountIs(3) });
    const parts: string[] = [];
    for await (const part of result.fullStream) parts.push(part.type);
    expect(parts).toContain('tool-call');
    expect(parts).toContain('tool-result');
    expect(await result.text).toContain('Hello from Switchyard');
  });

  /** A conversation whose second request carries the first answer, as `response.messages` gives it back. */
  async function twoTurns(providerOptions?: { openai: { store: boolean } }) {
    const first = await generateText({ model: provider()('demo'), prompt: 'Hello', providerOptions });
    const messages: ModelMessage[] = [{ role: 'user', content: 'Hello' }, ...first.response.messages, { role: 'user', content: 'And again?' }];
    return generateText({ model: provider()('demo'), messages, providerOptions });
  }

  it('a second turn with store: false sends the first answer itself, and is served', async () => {
    const second = await twoTurns({ openai: { store: false } });
    expect(second.text).toContain('Hello from Switchyard');
  });

  // With the AI SDK's default (`store` unset, i.e. OpenAI's default of true), @ai-sdk/openai sends
  // the earlier assistant message as `{ type: 'item_reference', id }` (the id the gateway gave it):
  // the gateway resolves it from its stored responses.
  it('a second turn with the default settings (the earlier answer as an item_reference)', async () => {
    sent.length = 0;
    const second = await twoTurns();
    expect(second.text).toContain('Hello from Switchyard');
    const input = (sent.at(-1) as { input: Array<{ type?: string; id?: string }> }).input;
    const reference = input.find((i) => i.type === 'item_reference');
    expect(reference?.id).toMatch(/^msg_/);
    const line = await lineOf(t, second.response.headers);
    expect(line).toMatchObject({ ingress: 'responses', status: 200 });
  });
});
