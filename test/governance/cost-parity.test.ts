/**
 * Cost from every built-in provider's recorded answers, plain and streamed: the gateway's
 * `usage.cost` (and x-switchyard-cost-usd, and the cost the request is settled and logged with)
 * equals the price table's arithmetic, written out here from the table's rates, not computed by
 * costOf. Parity: each recorded plain answer's usage is also sent as a stream (the provider's own
 * recorded stream with that usage in its usage event), and the streamed cost equals the plain one.
 */
import { EventStreamCodec } from '@smithy/core/event-streams';
import { fromUtf8, toUtf8 } from '@smithy/core/serde';
import { describe, expect, it } from 'vitest';
import type OpenAI from 'openai';
import { fakeUpstream, loadFixture, logLineFor, readFixtureFile, replay, splitStream, streamAnswer, useTestGateway, type FakeUpstream, type ScriptedResponse } from 'switchyard-gateway/kit/testing';
import { configYaml, fixturesOf } from '../helpers/repo.ts';

type Provider = 'openai' | 'azure' | 'anthropic' | 'gemini' | 'bedrock';
/** A recorded provider payload, read and edited field by field. */
// biome-ignore lint/suspicious/noExplicitAny: provider JSON of five different shapes
type RecordedJson = any;

/**
 * USD per million tokens, copied from src/governance/prices.json (dated 2025-08 / 2025-10) for
 * the target models below, and from the azure target's `price:` (the table has no Azure entry).
 */
const RATES = {
  /** openai gpt-4o */
  openai: { input: 2.5, cached: 1.25, output: 10 },
  /** azure-openai, the target's own price (gpt-5's list price) */
  azure: { input: 1.25, cached: 0.125, output: 10 },
  /** anthropic claude-sonnet-4-5 (below 200k prompt tokens) */
  anthropic: { input: 3, cached: 0.3, write: 3.75, output: 15 },
  /** gemini gemini-2.5-flash (no cached rate: cached tokens at the input rate) */
  gemini: { input: 0.3, output: 2.5 },
  /** bedrock anthropic.claude-sonnet-4 (the target is its us. inference profile, dated id) */
  bedrock: { input: 3, cached: 0.3, write: 3.75, output: 15 },
};
const { openai: O, azure: Z, anthropic: A, gemini: G, bedrock: B } = RATES;

interface Case {
  fixture: string;
  /** The cost in USD, from the recorded usage and RATES, written out. */
  usd: number;
  /** Why this case is expected to fail until a provider bug is fixed (it.fails). */
  knownBug?: string;
}

/** Recorded non-streamed answers; the comment gives the recorded usage as the provider reports it. */
const PLAIN: Record<Provider, Case[]> = {
  openai: [
    { fixture: 'chat-basic', usd: (14 * O.input + 7 * O.output) / 1e6 }, // prompt 14 (cached 0), completion 7
    { fixture: 'chat-tool-call', usd: (68 * O.input + 12 * O.output) / 1e6 }, // prompt 68, completion 12
    { fixture: 'chat-reasoning-usage-details', usd: (11 * O.input + 809 * O.output) / 1e6 }, // completion 809 includes 768 reasoning
  ],
  azure: [{ fixture: 'chat-basic', usd: (8 * Z.input + 271 * Z.output) / 1e6 }], // completion 271 includes 192 reasoning
  anthropic: [
    { fixture: 'messages-system-prompt', usd: (20 * A.input + 10 * A.output) / 1e6 },
    { fixture: 'messages-tool-use', usd: (415 * A.input + 76 * A.output) / 1e6 },
    {
      // input_tokens 3 (uncached), cache_read_input_tokens 1111, cache_creation_input_tokens 418, output 33
      fixture: 'messages-usage-cache-read',
      usd: (3 * A.input + 1111 * A.cached + 418 * A.write + 33 * A.output) / 1e6,
    },
  ],
  gemini: [
    { fixture: 'generate-basic-max-tokens', usd: (7 * G.input + (149 + 48) * G.output) / 1e6 }, // candidates 149 + thoughts 48, billed as output
    { fixture: 'generate-function-call', usd: (17 * G.input + 6 * G.output) / 1e6 },
    { fixture: 'image-input-base64', usd: (1817 * G.input + 5 * G.output) / 1e6 }, // 11 text + 1806 image prompt tokens
  ],
  bedrock: [
    { fixture: 'converse-basic-system', usd: (7 * B.input + 30 * B.output) / 1e6 },
    { fixture: 'converse-tool-use', usd: (426 * B.input + 66 * B.output) / 1e6 },
    { fixture: 'converse-usage-cache-read', usd: (2 * B.input + 1322 * B.cached + 5 * B.output) / 1e6 }, // inputTokens 2 exclude the 1322 read from cache
  ],
};

/** Recorded streams (usage in their last usage event). */
const STREAMED: Record<Provider, Case[]> = {
  openai: [
    { fixture: 'stream-tool-call', usd: (53 * O.input + 15 * O.output) / 1e6 },
    { fixture: 'stream-refusal', usd: (17 * O.input + 13 * O.output) / 1e6 },
  ],
  azure: [{ fixture: 'stream-model-router-usage', usd: (15 * Z.input + 78 * Z.output) / 1e6 }],
  anthropic: [
    { fixture: 'stream-basic', usd: (11 * A.input + 6 * A.output) / 1e6 }, // message_start input 11, message_delta output 6
    { fixture: 'stream-tool-use', usd: (377 * A.input + 65 * A.output) / 1e6 },
    { fixture: 'stream-thinking', usd: (43 * A.input + 282 * A.output) / 1e6 },
  ],
  gemini: [
    { fixture: 'stream-basic', usd: (6 * G.input + 377 * G.output) / 1e6 }, // the last (cumulative) usageMetadata
    { fixture: 'stream-system-instruction', usd: (20 * G.input + (253 + 260) * G.output) / 1e6 },
  ],
  bedrock: [
    { fixture: 'converse-stream-basic', usd: (13 * B.input + 82 * B.output) / 1e6 },
    { fixture: 'converse-stream-tool-use', usd: (471 * B.input + 91 * B.output) / 1e6 },
  ],
};

const FOLDER: Record<Provider, Parameters<typeof fixturesOf>[0]> = { openai: 'openai', azure: 'azure', anthropic: 'anthropic', gemini: 'gemini', bedrock: 'bedrock' };
const upstreams = Object.fromEntries((Object.keys(FOLDER) as Provider[]).map((p) => [p, fakeUpstream(() => ({ status: 500, body: 'no case set' }))])) as Record<Provider, FakeUpstream>;

const t = useTestGateway(
  () =>
    configYaml({
      providers: [
        `  openai: { plugin: openai, baseUrl: "${upstreams.openai.url}/v1" }`,
        `  azure: { plugin: azure-openai, endpoint: "${upstreams.azure.url}/", apiKey: azure-test-key-0123456789, apiVersion: 2024-12-01-preview }`,
        `  anthropic: { plugin: anthropic, baseUrl: "${upstreams.anthropic.url}", apiKey: sk-ant-test-0123456789, maxTokens: 1024 }`,
        `  gemini: { plugin: gemini, baseUrl: "${upstreams.gemini.url}", apiKey: gemini-test-key-0123456789 }`,
        `  bedrock: { plugin: bedrock, region: us-east-1, endpoint: "${upstreams.bedrock.url}", accessKeyId: AKIDCOSTTEST0001, secretAccessKey: cost-test-secret-0123456789 }`,
      ].join('\n'),
      models: [
        '  openai: { retry: { attempts: 1 }, targets: [{ provider: openai, model: gpt-4o }] }',
        `  azure: { retry: { attempts: 1 }, targets: [{ provider: azure, model: my-gpt5-deployment, price: { input: ${Z.input}, cachedInput: ${Z.cached}, output: ${Z.output} } }] }`,
        '  anthropic: { retry: { attempts: 1 }, targets: [{ provider: anthropic, model: claude-sonnet-4-5-20250929 }] }',
        '  gemini: { retry: { attempts: 1 }, targets: [{ provider: gemini, model: gemini-2.5-flash }] }',
        '  bedrock: { retry: { attempts: 1 }, targets: [{ provider: bedrock, model: "us.anthropic.claude-sonnet-4-20250514-v1:0" }] }',
      ].join('\n'),
    }),
  { upstreams: Object.values(upstreams) },
);

const MESSAGES = [{ role: 'user' as const, content: 'What does this cost?' }];

/** Within a nano-dollar: the gateway rounds costs to 1e-9 USD. */
function expectUsd(got: number | null | undefined, expected: number): void {
  expect(got).toBeTypeOf('number');
  expect(Math.abs(got! - expected), `cost ${got}, expected ${expected}`).toBeLessThanOrEqual(0.5e-9 + 1e-15);
}

/** A plain answer: usage.cost, the header and the logged (settled) cost agree; returns the cost. */
async function plainCost(provider: Provider, answer: ScriptedResponse): Promise<number> {
  upstreams[provider].setHandler(() => answer);
  const { data, response } = await t.client().chat.completions.create({ model: provider, messages: MESSAGES }).withResponse();
  const cost = (data.usage as { cost?: number } | undefined)?.cost;
  expect(cost).toBeTypeOf('number');
  expect(Number(response.headers.get('x-switchyard-cost-usd'))).toBe(cost);
  expect((await logLineFor(t, response.headers.get('x-request-id')!)).costUsd).toBe(cost);
  return cost!;
}

/** A streamed answer: the cost in the usage chunk, and the logged (settled) cost; returns the cost. */
async function streamedCost(provider: Provider, answer: ScriptedResponse): Promise<number> {
  upstreams[provider].setHandler(() => answer);
  const { data: stream, response } = await t
    .client()
    .chat.completions.create({ model: provider, messages: MESSAGES, stream: true, stream_options: { include_usage: true } })
    .withResponse();
  const chunks: OpenAI.Chat.ChatCompletionChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  const usage = chunks.filter((c) => c.usage).at(-1)?.usage as { cost?: number } | undefined;
  expect(usage?.cost).toBeTypeOf('number');
  expect((await logLineFor(t, response.headers.get('x-request-id')!)).costUsd).toBe(usage!.cost);
  return usage!.cost!;
}

// ------------------------------------------------------------------ a recorded stream carrying another answer's usage

/** Rewrites the JSON of each `data:` line of a recorded SSE stream (event lines and separators kept). */
function rewriteSse(provider: Provider, name: string, edit: (event: RecordedJson) => void): ScriptedResponse {
  const fixture = loadFixture(fixturesOf(FOLDER[provider]), name);
  const chunks = splitStream(fixture).map((b) =>
    b.toString('utf8').replace(/^data: (.*)$/m, (line, json: string) => {
      if (json.trim() === '[DONE]') return line;
      const event = JSON.parse(json);
      edit(event);
      return `data: ${JSON.stringify(event)}`;
    }),
  );
  return streamAnswer(chunks, { headers: fixture.headers });
}

const codec = new EventStreamCodec(toUtf8, fromUtf8);

/** The recorded ConverseStream frames (decoded view) re-encoded with the AWS codec, the metadata frame's usage replaced. */
function bedrockStreamWithUsage(name: string, usage: unknown): ScriptedResponse {
  const frames = readFixtureFile(fixturesOf('bedrock'), `${name}.events.jsonl`)
    .toString('utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { headers: Record<string, string>; payload: RecordedJson });
  const chunks = frames.map(({ headers, payload }) => {
    if (headers[':event-type'] === 'metadata') payload = { ...payload, usage };
    const h: Record<string, { type: 'string'; value: string }> = {};
    for (const [k, v] of Object.entries(headers)) h[k] = { type: 'string', value: v };
    return Buffer.from(codec.encode({ headers: h, body: fromUtf8(JSON.stringify(payload)) }));
  });
  return streamAnswer(chunks, { headers: { 'content-type': 'application/vnd.amazon.eventstream' } });
}

/** The provider's recorded stream, its usage event(s) replaced by the usage of the recorded plain answer. */
function streamOf(provider: Provider, plain: RecordedJson): ScriptedResponse {
  switch (provider) {
    case 'openai':
      return rewriteSse('openai', 'stream-tool-call', (e) => {
        if (e.usage) e.usage = plain.usage;
      });
    case 'azure':
      return rewriteSse('azure', 'stream-model-router-usage', (e) => {
        if (e.usage) e.usage = plain.usage;
      });
    case 'anthropic':
      // message_start carries the prompt side, message_delta the output so far.
      return rewriteSse('anthropic', 'stream-basic', (e) => {
        if (e.type === 'message_start') e.message.usage = { ...plain.usage, output_tokens: 1 };
        if (e.type === 'message_delta') e.usage = { output_tokens: plain.usage.output_tokens };
      });
    case 'gemini':
      return rewriteSse('gemini', 'stream-basic', (e) => {
        if (e.usageMetadata) e.usageMetadata = plain.usageMetadata;
      });
    case 'bedrock':
      return bedrockStreamWithUsage('converse-stream-basic', plain.usage);
  }
}

for (const provider of Object.keys(PLAIN) as Provider[]) {
  describe(`${provider}: cost from recorded answers`, () => {
    for (const c of PLAIN[provider]) {
      (c.knownBug ? it.fails : it)(`${c.fixture}: plain and streamed cost the same, the price table's arithmetic${c.knownBug ? ` (known bug: ${c.knownBug})` : ''}`, async () => {
        const fixture = loadFixture(fixturesOf(FOLDER[provider]), c.fixture);
        const plain = await plainCost(provider, replay(fixture));
        const streamed = await streamedCost(provider, streamOf(provider, fixture.json));
        expect(streamed).toBe(plain);
        expectUsd(plain, c.usd);
      });
    }
    for (const c of STREAMED[provider]) {
      it(`${c.fixture} (recorded stream): the price table's arithmetic`, async () => {
        const fixture = loadFixture(fixturesOf(FOLDER[provider]), c.fixture);
        expectUsd(await streamedCost(provider, replay(fixture)), c.usd);
      });
    }
  });
}
