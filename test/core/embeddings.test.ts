/**
 * POST /v1/embeddings through the same pipeline as chat: the official SDK (which asks for base64
 * by default and decodes it) and plain float answers, routed by alias, validated, priced and logged.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { DEV_KEY, logLineFor, startTestGateway, type TestGateway } from 'switchyard-gateway/kit/testing';

let t: TestGateway;
beforeAll(async () => {
  t = await startTestGateway(
    `keys:
  - { name: dev, key: ${DEV_KEY} }
  - { name: chat-only, key: sk-chat-only-0123456789, models: [demo] }
providers:
  mock: { plugin: mock, embeddingDimensions: 8 }
  ollama: { plugin: ./ollama.ts, baseUrl: "http://127.0.0.1:9" }
models:
  demo: { targets: [{ provider: mock, model: mock-1 }] }
  embed: { targets: [{ provider: mock, model: mock-embed, price: { input: 0.02, output: 0 } }] }
  chat-only: { targets: [{ provider: ollama, model: llama3 }] }
`,
    { files: { 'ollama.ts': `export { default } from '${new URL('../../plugins/examples/ollama-native/index.ts', import.meta.url).pathname}';\n` } },
  );
});
afterAll(() => t.close());

describe('embeddings', () => {
  it('serves the official SDK (base64 on the wire, floats in hand), deterministic, with usage and cost', async () => {
    const client = t.client();
    const a = await client.embeddings.create({ model: 'embed', input: ['hello world', 'second text'] });
    expect(a.object).toBe('list');
    expect(a.model).toBe('mock-embed');
    expect(a.data).toHaveLength(2);
    expect(a.data[0].embedding).toHaveLength(8);
    expect(a.data.map((d) => d.index)).toEqual([0, 1]);
    expect(a.usage.prompt_tokens).toBeGreaterThan(0);
    const again = await client.embeddings.create({ model: 'embed', input: 'hello world' });
    expect(again.data[0].embedding).toEqual(a.data[0].embedding);
    // Float32 round trip: the SDK decoded what the gateway encoded.
    const floats = await client.embeddings.create({ model: 'embed', input: 'hello world', encoding_format: 'float' });
    expect(floats.data[0].embedding.map((x) => Math.fround(x))).toEqual(a.data[0].embedding);
    expect((floats.usage as { cost?: number }).cost).toBeCloseTo((floats.usage.prompt_tokens * 0.02) / 1e6, 12);
  });

  it("base64 on request is OpenAI's encoding: little-endian float32", async () => {
    const res = await fetch(`${t.baseURL}/embeddings`, {
      method: 'POST',
      headers: { authorization: `Bearer ${DEV_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'embed', input: 'abc', encoding_format: 'base64', dimensions: 4 }),
    });
    expect(res.status).toBe(200);
    expect(Number(res.headers.get('x-switchyard-cost-usd'))).toBeGreaterThan(0);
    const body = (await res.json()) as { data: Array<{ embedding: string }> };
    const bytes = Buffer.from(body.data[0].embedding, 'base64');
    expect(bytes.length).toBe(16);
    const norm = Math.hypot(...[0, 1, 2, 3].map((i) => bytes.readFloatLE(i * 4)));
    expect(norm).toBeCloseTo(1, 5);
  });

  it('goes through auth, validation and routing like chat, and is logged', async () => {
    await expect(t.client('sk-chat-only-0123456789').embeddings.create({ model: 'embed', input: 'x' })).rejects.toBeInstanceOf(OpenAI.PermissionDeniedError);
    await expect(t.client('sk-wrong-key-0123456789').embeddings.create({ model: 'embed', input: 'x' })).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
    const missing = await t
      .client()
      .embeddings.create({ model: 'embed' } as never)
      .catch((e: InstanceType<typeof OpenAI.APIError>) => e);
    expect(missing).toMatchObject({ status: 400, code: 'missing_required_parameter', param: 'input' });
    const bad = await t
      .client()
      .embeddings.create({ model: 'embed', input: [] })
      .catch((e: InstanceType<typeof OpenAI.APIError>) => e);
    expect(bad).toMatchObject({ status: 400, param: 'input' });
    const notEmbedding = await t
      .client()
      .embeddings.create({ model: 'chat-only', input: 'x' })
      .catch((e: InstanceType<typeof OpenAI.APIError>) => e);
    expect(notEmbedding).toMatchObject({ status: 400, code: 'invalid_request', param: 'model' });
    const ok = await t.client().embeddings.create({ model: 'embed', input: 'log me' }).withResponse();
    const line = await logLineFor(t, ok.response.headers.get('x-request-id')!);
    expect(line).toMatchObject({ model: 'embed', provider: 'mock', status: 200, key: 'dev' });
    expect(line.promptTokens).toBeGreaterThan(0);
  });
});
