/**
 * POST /v1/embeddings through the gateway, provider by provider, with the official openai SDK:
 * its default (it asks for base64 and decodes it) and `encoding_format: 'float'`, served by
 * openai, azure-openai, gemini, bedrock (Titan and Cohere) and the mock, each fake upstream
 * replaying the embeddings fixtures of test/fixtures/<provider>/ (constructed from the
 * providers' documentation; see the README there). Checked: the vectors are the fixture's (as
 * float32 after base64), usage, the cost header where a price is known, and what went upstream.
 */
import { describe, expect, it } from 'vitest';
import { DEV_KEY, fakeUpstream, loadFixture, logLineFor, replay, useTestGateway, type FakeUpstream, type ScriptedResponse } from 'switchyard-gateway/kit/testing';
import { vectorOf } from '../../plugins/mock/embeddings.ts';
import { fixturesOf } from '../helpers/repo.ts';
import { signedByAws } from '../helpers/sigv4.ts';

const f = (provider: 'openai' | 'azure' | 'gemini' | 'bedrock', name: string) => loadFixture(fixturesOf(provider), name);

const AWS = { accessKeyId: 'AKIDEMBEDINGRESS01', secretAccessKey: 'embed-ingress-secret-0123456789' };
const TITAN = 'amazon.titan-embed-text-v2:0';
const COHERE = 'cohere.embed-english-v3';

const BAD_SIGNATURE: ScriptedResponse = {
  status: 403,
  headers: { 'content-type': 'application/json', 'x-amzn-errortype': 'InvalidSignatureException:http://internal.amazon.com/coral/com.amazon.coral.service/' },
  body: { message: 'The request signature we calculated does not match the signature you provided.' },
};

const openai = fakeUpstream(() => replay(f('openai', 'embeddings-basic')));
const azure = fakeUpstream(() => replay(f('azure', 'embeddings-basic')));
const gemini = fakeUpstream(() => replay(f('gemini', 'embeddings-batch')));
/** Bedrock answers signed InvokeModel calls, Titan or Cohere by the model in the path. */
const bedrock = fakeUpstream(async (req) => {
  if (!(await signedByAws(req, AWS))) return BAD_SIGNATURE;
  return replay(f('bedrock', req.url.includes('titan') ? 'embeddings-titan-v2' : 'embeddings-cohere-v3'));
});

const t = useTestGateway(
  () => `keys:
  - { name: dev, key: ${DEV_KEY} }
providers:
  oai: { plugin: openai, baseUrl: "${openai.url}/v1", apiKey: test-openai-key }
  az: { plugin: azure-openai, endpoint: "${azure.url}", apiKey: test-azure-key }
  g: { plugin: gemini, baseUrl: "${gemini.url}", apiKey: test-gemini-key }
  aws: { plugin: bedrock, region: us-east-1, endpoint: "${bedrock.url}", accessKeyId: ${AWS.accessKeyId}, secretAccessKey: ${AWS.secretAccessKey} }
  mock: { plugin: mock, embeddingDimensions: 8 }
models:
  oai-embed: { retry: { attempts: 1 }, targets: [{ provider: oai, model: text-embedding-3-small }] }
  az-embed: { retry: { attempts: 1 }, targets: [{ provider: az, model: my-embeddings, price: { input: 0.02, output: 0 } }] }
  g-embed: { retry: { attempts: 1 }, targets: [{ provider: g, model: gemini-embedding-001 }] }
  titan: { retry: { attempts: 1 }, targets: [{ provider: aws, model: "${TITAN}" }] }
  cohere: { retry: { attempts: 1 }, targets: [{ provider: aws, model: ${COHERE} }] }
  mock-embed: { targets: [{ provider: mock, model: mock-embed }] }
`,
  { upstreams: [openai, azure, gemini, bedrock] },
);

interface EmbeddingCase {
  name: string;
  alias: string;
  input: string | string[];
  dimensions?: number;
  /** The fake that serves it (none for the mock). */
  upstream?: FakeUpstream;
  /** The path and body the provider must have sent (the fixture's request). */
  sent?: { url: string; body: unknown };
  /** The vectors the client must get, as float64 (the fixture's values). */
  vectors: () => number[][];
  model: string;
  tokens: number;
  /** USD per million input tokens (the built-in table's or the target's), null when no price is known. */
  inputPrice: number | null;
}

const CASES: EmbeddingCase[] = [
  {
    name: 'openai',
    alias: 'oai-embed',
    input: f('openai', 'embeddings-basic').request.input,
    dimensions: 4,
    upstream: openai,
    sent: { url: '/v1/embeddings', body: f('openai', 'embeddings-basic').request },
    vectors: () => f('openai', 'embeddings-basic').json.data.map((d: { embedding: number[] }) => d.embedding),
    model: 'text-embedding-3-small',
    tokens: 16,
    inputPrice: 0.02,
  },
  {
    name: 'azure-openai',
    alias: 'az-embed',
    input: f('azure', 'embeddings-basic').request.input,
    upstream: azure,
    sent: { url: '/openai/deployments/my-embeddings/embeddings?api-version=2024-10-21', body: { ...f('azure', 'embeddings-basic').request, model: 'my-embeddings' } },
    vectors: () => f('azure', 'embeddings-basic').json.data.map((d: { embedding: number[] }) => d.embedding),
    model: 'text-embedding-3-small',
    tokens: 4,
    // Not in the built-in table: the target's own price.
    inputPrice: 0.02,
  },
  {
    name: 'gemini',
    alias: 'g-embed',
    input: ['What is the meaning of life?', 'How does the brain work?'],
    dimensions: 4,
    upstream: gemini,
    sent: { url: '/v1beta/models/gemini-embedding-001:batchEmbedContents', body: f('gemini', 'embeddings-batch').request },
    vectors: () => f('gemini', 'embeddings-batch').json.embeddings.map((e: { values: number[] }) => e.values),
    model: 'gemini-embedding-001',
    // Gemini reports no usage: 4 characters a token, rounded up per text.
    tokens: 13,
    inputPrice: null,
  },
  {
    name: 'bedrock titan',
    alias: 'titan',
    input: 'What is the meaning of life?',
    dimensions: 256,
    upstream: bedrock,
    sent: { url: '/model/amazon.titan-embed-text-v2%3A0/invoke', body: f('bedrock', 'embeddings-titan-v2').request },
    vectors: () => [f('bedrock', 'embeddings-titan-v2').json.embedding],
    model: TITAN,
    tokens: 8,
    inputPrice: 0.02,
  },
  {
    name: 'bedrock cohere',
    alias: 'cohere',
    input: ['What is the meaning of life?', 'How does the brain work?'],
    upstream: bedrock,
    sent: { url: '/model/cohere.embed-english-v3/invoke', body: f('bedrock', 'embeddings-cohere-v3').request },
    vectors: () => f('bedrock', 'embeddings-cohere-v3').json.embeddings.float,
    model: COHERE,
    // From x-amzn-bedrock-input-token-count: Cohere's body has no count.
    tokens: 14,
    inputPrice: null,
  },
  {
    name: 'mock',
    alias: 'mock-embed',
    input: ['hello world', 'second text'],
    vectors: () => ['hello world', 'second text'].map((text) => vectorOf(text, 8)),
    model: 'mock-embed',
    tokens: 4,
    // The mock's `*` entry in the price table: free, and priced.
    inputPrice: 0,
  },
];

const float32 = (vectors: number[][]) => vectors.map((v) => v.map((x) => Math.fround(x)));

describe.each(CASES)('embeddings through the gateway: $name', (c) => {
  const request = () => ({ model: c.alias, input: c.input, ...(c.dimensions ? { dimensions: c.dimensions } : {}) });

  /** Usage, cost (header, usage.cost, log line) and what went upstream: the same whatever the encoding. */
  async function expectAccounted(headers: Headers, usage: { prompt_tokens: number; total_tokens: number; cost?: number }): Promise<void> {
    expect(usage).toMatchObject({ prompt_tokens: c.tokens, total_tokens: c.tokens });
    const line = await logLineFor(t, headers.get('x-request-id')!);
    expect(line).toMatchObject({ model: c.alias, status: 200, promptTokens: c.tokens, ingress: 'embeddings' });
    if (c.inputPrice === null) {
      expect(headers.get('x-switchyard-cost-usd')).toBeNull();
      expect(usage.cost).toBeUndefined();
      expect(line.costUsd).toBeNull();
    } else {
      const cost = (c.tokens * c.inputPrice) / 1e6;
      expect(Number(headers.get('x-switchyard-cost-usd'))).toBeCloseTo(cost, 15);
      expect(usage.cost).toBeCloseTo(cost, 15);
      expect(line.costUsd).toBeCloseTo(cost, 15);
    }
    if (c.upstream && c.sent) {
      expect(c.upstream.requests.at(-1)!.url).toBe(c.sent.url);
      expect(c.upstream.requests.at(-1)!.body).toEqual(c.sent.body);
    }
  }

  it("the SDK's default: base64 on the wire (little-endian float32), decoded to the fixture's vectors", async () => {
    const raw = await t.client().embeddings.create(request()).asResponse();
    expect(raw.status).toBe(200);
    const wire = (await raw.json()) as { data: Array<{ embedding: unknown }> };
    const decoded = wire.data.map((d) => {
      expect(typeof d.embedding).toBe('string');
      const bytes = Buffer.from(d.embedding as string, 'base64');
      return Array.from({ length: bytes.length / 4 }, (_, i) => bytes.readFloatLE(i * 4));
    });
    expect(decoded).toEqual(float32(c.vectors()));

    const { data, response } = await t.client().embeddings.create(request()).withResponse();
    expect(data.model).toBe(c.model);
    expect(data.data.map((d) => d.index)).toEqual(c.vectors().map((_, i) => i));
    expect(data.data.map((d) => d.embedding)).toEqual(float32(c.vectors()));
    await expectAccounted(response.headers, data.usage);
  });

  it("encoding_format 'float': the fixture's values exactly", async () => {
    const { data, response } = await t
      .client()
      .embeddings.create({ ...request(), encoding_format: 'float' })
      .withResponse();
    expect(data.object).toBe('list');
    expect(data.model).toBe(c.model);
    expect(data.data.map((d) => d.embedding)).toEqual(c.vectors());
    await expectAccounted(response.headers, data.usage);
  });
});

describe('embeddings through the gateway: an OpenAI-compatible upstream that answers base64 unasked', () => {
  it('is decoded for a float client and re-encoded for a base64 one', async () => {
    openai.setHandler(() => replay(f('openai', 'embeddings-base64')));
    const floats = await t.client().embeddings.create({ model: 'oai-embed', input: 'hello', encoding_format: 'float' });
    expect(floats.data[0].embedding).toEqual([1, -0.5, 0.25, 0]);
    const sdk = await t.client().embeddings.create({ model: 'oai-embed', input: 'hello' });
    expect(sdk.data[0].embedding).toEqual([1, -0.5, 0.25, 0]);
    expect(openai.requests.map((r) => r.body.encoding_format)).toEqual(['float', 'float']);
  });
});
