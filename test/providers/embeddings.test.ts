/**
 * Embeddings over HTTP, provider by provider: each built-in provider's instance `embed()` against
 * a fake upstream replaying its fixtures (constructed from the providers' documentation, see
 * test/fixtures/README.md). Checked: the URL, the headers (auth, trace, SigV4 for Bedrock), the
 * exact body, the mapped answer, and that upstream errors become UpstreamErrors with the right
 * status. The /v1/embeddings route is tested where it is wired.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { isProviderUnavailable, type EmbeddingCall, type EmbeddingRequest, type ProviderInstance, type ProviderPlugin } from 'switchyard-gateway';
import { UpstreamError } from 'switchyard-gateway/kit';
import { loadFixture, replay, startFakeUpstream, type FakeUpstream, type RecordedRequest } from 'switchyard-gateway/kit/testing';
import openai from '../../plugins/openai/index.ts';
import azure from '../../plugins/azure-openai/index.ts';
import gemini from '../../plugins/gemini/index.ts';
import bedrock from '../../plugins/bedrock/index.ts';
import anthropic from '../../plugins/anthropic/index.ts';
import { fixturesOf } from '../helpers/repo.ts';
import { expectedSignature } from '../helpers/sigv4.ts';

const log = pino({ level: 'silent' });
const TRACE = { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' };
const instances: ProviderInstance[] = [];

let upstream: FakeUpstream;
beforeAll(async () => {
  upstream = await startFakeUpstream(() => ({ status: 500, body: { error: { message: 'no handler set' } } }));
});
afterEach(() => upstream.restore());
afterAll(async () => {
  await Promise.all(instances.map((i) => i.close?.()));
  await upstream.close();
});

async function create<O>(plugin: ProviderPlugin<O>, options: O, name = 'p'): Promise<ProviderInstance> {
  const created = await plugin.create(options, { name, log, configDir: '.' });
  if (isProviderUnavailable(created)) throw new Error(`provider ${name} is unavailable: ${created.unavailable}`);
  instances.push(created);
  return created;
}

function callOf(provider: string, model: string, embedding: Partial<EmbeddingRequest>, extra: Partial<EmbeddingCall> = {}): EmbeddingCall {
  return {
    provider,
    model,
    embedding: { model: 'alias', input: 'hi', ...embedding },
    signal: new AbortController().signal,
    requestId: 'req_embed',
    log,
    dropUnsupportedParams: false,
    timeouts: { connectMs: 2000, firstByteMs: 2000, idleMs: 2000, totalMs: 2000 },
    traceHeaders: TRACE,
    maxResponseBytes: 1024 * 1024,
    ...extra,
  };
}

async function failure(promise: Promise<unknown>): Promise<UpstreamError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(UpstreamError);
  return err as UpstreamError;
}

const sent = (): RecordedRequest => upstream.requests.at(-1)!;

describe('capabilities', () => {
  it('every HTTP built-in with an embeddings part declares it and has embed(); the others neither', async () => {
    for (const plugin of [openai, azure, gemini, bedrock]) expect(plugin.capabilities?.embeddings, plugin.id).toBe(true);
    expect(anthropic.capabilities?.embeddings).toBeUndefined();
    const chatOnly = await create(anthropic as ProviderPlugin<unknown>, { apiKey: 'k', baseUrl: 'http://127.0.0.1:9' });
    expect(chatOnly.embed).toBeUndefined();
  });
});

describe('openai', () => {
  const fixture = (name: string) => loadFixture(fixturesOf('openai'), name);

  it('POST {baseUrl}/embeddings with auth, extra and trace headers; the documented body; the list back', async () => {
    const f = fixture('embeddings-basic');
    upstream.setHandler(() => replay(f));
    const instance = await create(openai, { baseUrl: `${upstream.url}/v1`, apiKey: 'sk-test', headers: { 'OpenAI-Organization': 'org-1' } });
    const r = await instance.embed!(callOf('oa', 'text-embedding-3-small', { input: f.request.input, dimensions: 4, encoding_format: 'base64' }));
    expect(sent().method).toBe('POST');
    expect(sent().url).toBe('/v1/embeddings');
    expect(sent().headers).toMatchObject({ authorization: 'Bearer sk-test', 'openai-organization': 'org-1', 'content-type': 'application/json', traceparent: TRACE.traceparent });
    expect(sent().body).toEqual(f.request);
    expect(r).toEqual(f.json);
  });

  it('token arrays go upstream as they are', async () => {
    upstream.setHandler(() => replay(fixture('embeddings-basic')));
    const instance = await create(openai, { baseUrl: upstream.url });
    await instance.embed!(
      callOf('oa', 'm', {
        input: [
          [1, 2, 3],
          [4, 5],
        ],
      }),
    );
    expect(sent().body.input).toEqual([
      [1, 2, 3],
      [4, 5],
    ]);
    expect(sent().headers.authorization).toBeUndefined();
  });

  it('a base64 answer comes back as floats', async () => {
    upstream.setHandler(() => replay(fixture('embeddings-base64')));
    const instance = await create(openai, { baseUrl: upstream.url });
    const r = await instance.embed!(callOf('oa', 'm', {}));
    expect(r.data[0].embedding).toEqual([1, -0.5, 0.25, 0]);
  });

  it('errors: 401 and 429 (with Retry-After) as UpstreamErrors in OpenAI’s words', async () => {
    const instance = await create(openai, { baseUrl: upstream.url, apiKey: 'sk-bad' });
    upstream.setHandler(() => replay(fixture('error-401-invalid-api-key')));
    const auth = await failure(instance.embed!(callOf('oa', 'm', {})));
    expect(auth).toMatchObject({ kind: 'http', status: 401, provider: 'p' });
    upstream.setHandler(() => replay(fixture('error-429-tokens-rate-limit'), { headers: { 'content-type': 'application/json', 'retry-after': '3' } }));
    const limited = await failure(instance.embed!(callOf('oa', 'm', {})));
    expect(limited).toMatchObject({ status: 429, retryAfterMs: 3000, retryable: true });
    expect(limited.failure.message).toMatch(/Request too large/);
  });

  it('an answer that is not a list is a protocol failure (502), not a crash', async () => {
    upstream.setHandler(() => ({ body: { object: 'list' } }));
    const instance = await create(openai, { baseUrl: upstream.url });
    expect(await failure(instance.embed!(callOf('oa', 'm', {})))).toMatchObject({ kind: 'protocol' });
  });
});

describe('azure-openai', () => {
  const fixture = (name: string) => loadFixture(fixturesOf('azure'), name);

  it('deployments URL with the api-version, api-key header, OpenAI body and answer', async () => {
    const f = fixture('embeddings-basic');
    upstream.setHandler(() => replay(f));
    const instance = await create(azure, { endpoint: upstream.url, apiKey: 'az-key' });
    const r = await instance.embed!(callOf('az', 'my-embeddings', { input: f.request.input }));
    expect(sent().url).toBe('/openai/deployments/my-embeddings/embeddings?api-version=2024-10-21');
    expect(sent().headers['api-key']).toBe('az-key');
    expect(sent().headers.traceparent).toBe(TRACE.traceparent);
    expect(sent().body).toEqual({ ...f.request, model: 'my-embeddings' });
    expect(r).toEqual(f.json);
  });

  it('v1 URL with the deployment in the body', async () => {
    upstream.setHandler(() => replay(fixture('embeddings-basic')));
    const instance = await create(azure, { endpoint: upstream.url, apiKey: 'az-key', mode: 'v1' });
    await instance.embed!(callOf('az', 'my-embeddings', { input: [[1, 2]] }));
    expect(sent().url).toBe('/openai/v1/embeddings');
    expect(sent().body).toEqual({ model: 'my-embeddings', input: [[1, 2]], encoding_format: 'float' });
  });

  it('errors: Azure’s 429 with the wait only in its message', async () => {
    upstream.setHandler(() => replay(fixture('error-429-rate-limit')));
    const instance = await create(azure, { endpoint: upstream.url, apiKey: 'az-key' });
    const err = await failure(instance.embed!(callOf('az', 'my-embeddings', {})));
    expect(err.status).toBe(429);
    expect(err.retryAfterMs).toBeGreaterThan(0);
  });
});

describe('gemini', () => {
  const fixture = (name: string) => loadFixture(fixturesOf('gemini'), name);

  it('POST /v1beta/models/{model}:batchEmbedContents with x-goog-api-key; the documented body; values → data', async () => {
    const f = fixture('embeddings-batch');
    upstream.setHandler(() => replay(f));
    const instance = await create(gemini, { baseUrl: upstream.url, apiKey: 'g-key' });
    const r = await instance.embed!(callOf('g', 'gemini-embedding-001', { input: ['What is the meaning of life?', 'How does the brain work?'], dimensions: 4 }));
    expect(sent().url).toBe('/v1beta/models/gemini-embedding-001:batchEmbedContents');
    expect(sent().headers).toMatchObject({ 'x-goog-api-key': 'g-key', traceparent: TRACE.traceparent });
    expect(sent().body).toEqual(f.request);
    expect(r.data.map((d) => d.embedding)).toEqual(f.json.embeddings.map((e: { values: number[] }) => e.values));
    expect(r.usage).toEqual({ prompt_tokens: 13, total_tokens: 13 });
  });

  it('more than 100 texts: batches of 100, answers joined in input order with running indexes', async () => {
    upstream.setHandler((req) => {
      const texts = (req.body.requests as Array<{ content: { parts: [{ text: string }] } }>).map((r) => r.content.parts[0].text);
      return { body: { embeddings: texts.map((t) => ({ values: [Number(t)] })) }, delayMs: texts.length === 100 ? 30 : 0 };
    });
    const instance = await create(gemini, { baseUrl: upstream.url, apiKey: 'g-key', apiVersion: 'v1', embeddingTaskType: 'RETRIEVAL_DOCUMENT' });
    const input = Array.from({ length: 250 }, (_, i) => String(i));
    const r = await instance.embed!(callOf('g', 'models/text-embedding-004', { input }));
    expect(upstream.requests.map((q) => q.body.requests.length).sort()).toEqual([100, 100, 50]);
    expect(upstream.requests[0].url).toBe('/v1/models/text-embedding-004:batchEmbedContents');
    expect(upstream.requests[0].body.requests[0]).toMatchObject({ model: 'models/text-embedding-004', taskType: 'RETRIEVAL_DOCUMENT' });
    expect(r.data.map((d) => d.index)).toEqual(input.map((_, i) => i));
    expect(r.data.map((d) => (d.embedding as number[])[0])).toEqual(input.map(Number));
    // 10 one-character texts, 90 of two and 150 of three: each rounds up to 1 token.
    expect(r.usage.prompt_tokens).toBe(250);
  });

  it('errors: google.rpc 400 in Google’s words; an invalid key counts as 401', async () => {
    const instance = await create(gemini, { baseUrl: upstream.url, apiKey: 'g-key' });
    upstream.setHandler(() => replay(fixture('embeddings-error-400-batch-too-large')));
    const bad = await failure(instance.embed!(callOf('g', 'gemini-embedding-001', {})));
    expect(bad).toMatchObject({ status: 400, failure: { code: 'INVALID_ARGUMENT' } });
    expect(bad.failure.message).toMatch(/at most 100 requests/);
    upstream.setHandler(() => replay(fixture('error-400-api-key-invalid')));
    expect(await failure(instance.embed!(callOf('g', 'gemini-embedding-001', {})))).toMatchObject({ status: 401 });
  });
});

describe('bedrock', () => {
  const fixture = (name: string) => loadFixture(fixturesOf('bedrock'), name);
  const credentials = { accessKeyId: 'AKIDEMBEDTEST0001', secretAccessKey: 'embed-test-secret-0123456789' };
  const options = () => ({ region: 'us-east-1', endpoint: upstream.url, ...credentials });
  const TITAN = 'amazon.titan-embed-text-v2:0';
  const COHERE = 'cohere.embed-english-v3';

  /** Re-signs what arrived with the AWS SDK's signer at the date it carries: the signature must match. */
  async function expectSigned(req: RecordedRequest): Promise<void> {
    const auth = String(req.headers.authorization);
    expect(auth).toMatch(new RegExp(`^AWS4-HMAC-SHA256 Credential=${credentials.accessKeyId}/\\d{8}/us-east-1/bedrock/aws4_request, SignedHeaders=`));
    const expected = await expectedSignature(req, credentials);
    expect(req.headers.authorization).toBe(expected?.authorization);
    expect(req.headers['x-amz-content-sha256']).toBe(expected?.contentSha256);
  }

  it('Titan V2: POST /model/{id}/invoke, SigV4-signed, the documented body; the vector and its token count', async () => {
    const f = fixture('embeddings-titan-v2');
    upstream.setHandler(() => replay(f));
    const instance = await create(bedrock, options());
    const r = await instance.embed!(callOf('aws', TITAN, { input: 'What is the meaning of life?', dimensions: 256 }));
    expect(sent().url).toBe('/model/amazon.titan-embed-text-v2%3A0/invoke');
    expect(sent().headers.traceparent).toBe(TRACE.traceparent);
    expect(sent().body).toEqual(f.request);
    await expectSigned(sent());
    expect(r).toEqual({ object: 'list', model: TITAN, data: [{ object: 'embedding', index: 0, embedding: f.json.embedding }], usage: { prompt_tokens: 8, total_tokens: 8 } });
  });

  it('Titan, several inputs: one signed call each, at most 8 at once, answers in input order whatever order they arrive in', async () => {
    let inFlight = 0;
    let most = 0;
    upstream.setHandler(async (req) => {
      inFlight++;
      most = Math.max(most, inFlight);
      const n = Number(req.body.inputText.slice(1));
      await new Promise((resolve) => setTimeout(resolve, (20 - n) * 3));
      inFlight--;
      return { headers: { 'content-type': 'application/json', 'x-amzn-bedrock-input-token-count': '2' }, body: { embedding: [n], inputTextTokenCount: 2 } };
    });
    const instance = await create(bedrock, options());
    const input = Array.from({ length: 20 }, (_, i) => `t${i}`);
    const r = await instance.embed!(callOf('aws', TITAN, { input }));
    expect(upstream.requests).toHaveLength(20);
    expect(most).toBeLessThanOrEqual(8);
    expect(most).toBeGreaterThan(1);
    for (const req of upstream.requests.slice(0, 3)) await expectSigned(req);
    expect(r.data.map((d) => [d.index, (d.embedding as number[])[0]])).toEqual(input.map((_, i) => [i, i]));
    expect(r.usage).toEqual({ prompt_tokens: 40, total_tokens: 40 });
  });

  it('Cohere v3: the documented body; embeddings.float, tokens from x-amzn-bedrock-input-token-count', async () => {
    const f = fixture('embeddings-cohere-v3');
    upstream.setHandler(() => replay(f));
    const instance = await create(bedrock, options());
    const r = await instance.embed!(callOf('aws', COHERE, { input: ['What is the meaning of life?', 'How does the brain work?'] }));
    expect(sent().url).toBe('/model/cohere.embed-english-v3/invoke');
    expect(sent().body).toEqual(f.request);
    await expectSigned(sent());
    expect(r.data.map((d) => d.embedding)).toEqual(f.json.embeddings.float);
    expect(r.usage).toEqual({ prompt_tokens: 14, total_tokens: 14 });
  });

  it('errors: the exception named in x-amzn-errortype decides the status; one failed Titan call fails the whole request', async () => {
    const instance = await create(bedrock, options());
    upstream.setHandler(() => replay(fixture('error-429-throttling')));
    expect(await failure(instance.embed!(callOf('aws', TITAN, {})))).toMatchObject({ status: 429, failure: { code: 'ThrottlingException' } });
    upstream.setHandler((req) =>
      req.body.inputText === 'bad'
        ? {
            status: 400,
            headers: { 'content-type': 'application/json', 'x-amzn-errortype': 'ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/' },
            body: { message: 'Malformed input request' },
          }
        : { body: { embedding: [1], inputTextTokenCount: 1 }, delayMs: 20 },
    );
    const err = await failure(instance.embed!(callOf('aws', TITAN, { input: ['a', 'bad', 'c'] })));
    expect(err).toMatchObject({ status: 400, failure: { code: 'ValidationException', message: 'Malformed input request' } });
  });

  // The provider falls back to AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY: with them set there is no missing credential to see.
  it.skipIf(Boolean(process.env.AWS_ACCESS_KEY_ID && process.env.AWS_SECRET_ACCESS_KEY))(
    'without credentials: the provider answers unavailable, naming what is missing, and nothing is sent (skipped when AWS credentials are in the environment)',
    async () => {
      const created = await bedrock.create({ region: 'us-east-1', endpoint: upstream.url }, { name: 'nokeys', log, configDir: '.' });
      expect(created).toEqual({ unavailable: expect.stringContaining('no AWS credentials') });
      expect(upstream.requests).toHaveLength(0);
    },
  );
});

describe('limits shared with chat', () => {
  it('one maxResponseBytes budget covers all the calls of a request', async () => {
    upstream.setHandler(() => ({ body: { embedding: Array.from({ length: 100 }, () => 0.123456789), inputTextTokenCount: 1 } }));
    const instance = await create(bedrock, { region: 'us-east-1', endpoint: upstream.url, accessKeyId: 'AKID', secretAccessKey: 'secret' });
    const ok = await instance.embed!(callOf('aws', 'amazon.titan-embed-text-v2:0', { input: ['a'] }, { maxResponseBytes: 2500 }));
    expect(ok.data).toHaveLength(1);
    const err = await failure(instance.embed!(callOf('aws', 'amazon.titan-embed-text-v2:0', { input: ['a', 'b', 'c'] }, { maxResponseBytes: 2500 })));
    expect(err).toMatchObject({ kind: 'protocol' });
    expect(err.failure.message).toMatch(/larger than 2500 bytes/);
  });

  it('the first-byte timeout applies', async () => {
    // undici checks its parser timeouts on a coarse clock: the answer comes far later than the limit.
    upstream.setHandler(() => ({ body: { data: [] }, delayMs: 4000 }));
    const instance = await create(openai, { baseUrl: upstream.url });
    const started = Date.now();
    const err = await failure(instance.embed!(callOf('oa', 'm', {}, { timeouts: { connectMs: 1000, firstByteMs: 100, idleMs: 1000, totalMs: 1000 } })));
    expect(Date.now() - started).toBeLessThan(3500);
    expect(err).toMatchObject({ kind: 'timeout' });
  });

  it('an aborted call stops, with the abort', async () => {
    upstream.setHandler(() => ({ body: { data: [] }, delayMs: 300 }));
    const instance = await create(openai, { baseUrl: upstream.url });
    const controller = new AbortController();
    const pending = instance.embed!(callOf('oa', 'm', {}, { signal: controller.signal }));
    setTimeout(() => controller.abort(new Error('client left')), 20);
    await expect(pending).rejects.toThrow();
    expect(controller.signal.aborted).toBe(true);
  });
});
