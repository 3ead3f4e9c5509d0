/**
 * Grounding with Google Search through the Gemini way in on translated targets, driven by the
 * real Google GenAI SDK with `tools: [{googleSearch: {}}]` (what Gemini CLI's google_web_search
 * tool sends):
 *
 * - to an anthropic target it is Anthropic's server web search (`web_search_20250305`), and the
 *   recorded answers (test/fixtures/anthropic/*web-search*: server_tool_use, web_search_tool_result,
 *   text blocks with web_search_result_location citations) come back as the candidate's
 *   `groundingMetadata`: the queries, the pages as groundingChunks, and a groundingSupport per
 *   cited block whose UTF-8 byte segment cuts that block's text out of the answer, citing its
 *   pages; plain and streamed, as recorded and with multi-byte characters in the text;
 * - to an OpenAI-compatible chat target (no search of its own) it is reported dropped, or refused
 *   with Gemini's 400 when strict.
 */
import { ApiError, GoogleGenAI, type GroundingMetadata } from '@google/genai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DEV_KEY,
  type FakeUpstream,
  type Fixture,
  loadFixture,
  type RecordedRequest,
  replay,
  type ScriptedResponse,
  startFakeUpstream,
  startTestGateway,
  type TestGateway,
} from 'switchyard-gateway/kit/testing';
import { fixturesOf } from '../helpers/repo.ts';

type Json = Record<string, unknown>;
type Block = { type: string; text?: string; input?: { query?: string }; citations?: Array<{ url: string }>; content?: Array<{ url: string }> };

/** The recorded answers, as recorded or with every "'s" written "’s" (3 UTF-8 bytes, 1 UTF-16 unit). */
function answers(curly: boolean): { plain: Fixture; stream: Fixture } {
  const variant = (f: Fixture): Fixture => (curly ? { ...f, body: Buffer.from(f.body.toString('utf8').replaceAll("'s ", '\u2019s ')) } : f);
  return { plain: variant(loadFixture(fixturesOf('anthropic'), 'messages-web-search')), stream: variant(loadFixture(fixturesOf('anthropic'), 'stream-web-search')) };
}

/** The content blocks of a recorded answer: the JSON's, or rebuilt from the stream's events. */
function blocksOf(f: Fixture): Block[] {
  const text = f.body.toString('utf8');
  if (f.kind === 'json') return JSON.parse(text).content;
  const blocks: Array<Block & { json: string }> = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith('data: ')) continue;
    const e = JSON.parse(line.slice(6));
    if (e.type === 'content_block_start') blocks[e.index] = { ...e.content_block, citations: [...(e.content_block.citations ?? [])], json: '' };
    else if (e.type === 'content_block_delta') {
      const b = blocks[e.index];
      if (e.delta.type === 'text_delta') b.text = (b.text ?? '') + e.delta.text;
      else if (e.delta.type === 'citations_delta') b.citations!.push(e.delta.citation);
      else if (e.delta.type === 'input_json_delta') b.json += e.delta.partial_json;
    } else if (e.type === 'content_block_stop' && blocks[e.index].type === 'server_tool_use') blocks[e.index].input = JSON.parse(blocks[e.index].json);
  }
  return blocks;
}

/** What the Gemini answer must say, read from the recorded blocks. */
function expected(blocks: Block[]) {
  const texts = blocks.filter((b) => b.type === 'text');
  return {
    text: texts.map((b) => b.text).join(''),
    queries: blocks.filter((b) => b.type === 'server_tool_use').map((b) => b.input?.query),
    found: blocks.filter((b) => b.type === 'web_search_tool_result').flatMap((b) => (b.content ?? []).map((r) => r.url)),
    cited: texts.filter((b) => b.citations?.length).map((b) => ({ text: b.text, urls: [...new Set(b.citations!.map((c) => c.url))] })),
  };
}

/** The grounding checked against the recorded answer: every cited block is one support whose byte segment is its text. */
function expectGrounding(text: string, metadata: GroundingMetadata | undefined, fixture: Fixture) {
  const want = expected(blocksOf(fixture));
  expect(text).toBe(want.text);
  expect(metadata?.webSearchQueries).toEqual(want.queries);
  const uris = (metadata?.groundingChunks ?? []).map((c) => c.web?.uri);
  expect(new Set(uris).size).toBe(uris.length);
  for (const url of [...want.found, ...want.cited.flatMap((c) => c.urls)]) expect(uris).toContain(url);
  const bytes = Buffer.from(text, 'utf8');
  expect(want.cited.length).toBeGreaterThan(0);
  expect(metadata?.groundingSupports?.map((s) => s.segment?.text)).toEqual(want.cited.map((c) => c.text));
  metadata!.groundingSupports!.forEach((support, i) => {
    const { startIndex = 0, endIndex } = support.segment!;
    expect(bytes.subarray(startIndex, endIndex).toString('utf8')).toBe(want.cited[i].text);
    expect(support.groundingChunkIndices?.map((n) => uris[n])).toEqual(want.cited[i].urls);
  });
}

let t: TestGateway;
let claude: FakeUpstream;
let chat: FakeUpstream;
let curly = false;

/** Anthropic: the recorded web search answers when the server tool is asked for. */
function anthropicAnswer(req: RecordedRequest): ScriptedResponse {
  const body = req.body as { stream?: boolean; tools?: Json[] };
  if (!body.tools?.some((tool) => tool.type === 'web_search_20250305'))
    return { status: 400, body: { type: 'error', error: { type: 'invalid_request_error', message: 'this fake answers web search requests only' } } };
  const { plain, stream } = answers(curly);
  return replay(body.stream ? stream : plain);
}

beforeAll(async () => {
  claude = await startFakeUpstream(anthropicAnswer);
  chat = await startFakeUpstream((req) => ({
    body: {
      id: 'chatcmpl-1',
      object: 'chat.completion',
      created: 1,
      model: String(req.body.model),
      choices: [{ index: 0, message: { role: 'assistant', content: 'No search here.' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 5, completion_tokens: 4, total_tokens: 9 },
    },
  }));
  t = await startTestGateway(`keys:
  - { name: dev, key: ${DEV_KEY} }
providers:
  claude: { plugin: anthropic, baseUrl: "${claude.url}", apiKey: test-anthropic-key }
  compat: { plugin: openai, baseUrl: "${chat.url}/v1", apiKey: test-openai-key }
models:
  on-claude: { targets: [{ provider: claude, model: claude-sonnet-4-5 }] }
  on-chat: { targets: [{ provider: compat, model: small-llm }] }
`);
});
afterAll(async () => {
  await t?.close();
  await claude?.close();
  await chat?.close();
});

const sdk = (headers?: Record<string, string>) => new GoogleGenAI({ apiKey: DEV_KEY, httpOptions: { baseUrl: t.url, apiVersion: 'v1beta', headers, retryOptions: { attempts: 1 } } });

describe.each([
  ['as recorded', false],
  ['with multi-byte characters in the text', true],
])('googleSearch on an anthropic target (%s)', (_name, multiByte) => {
  beforeAll(() => {
    curly = multiByte;
  });

  it("generateContent: Anthropic's server web search, its answer as groundingMetadata", async () => {
    const r = await sdk().models.generateContent({
      model: 'on-claude',
      contents: 'What is in the tech news today?',
      config: { tools: [{ googleSearch: { timeRangeFilter: { startTime: '2024-09-01T00:00:00Z', endTime: '2024-09-30T00:00:00Z' } } }] },
    });
    expect(claude.requests.at(-1)!.body.tools).toEqual([{ type: 'web_search_20250305', name: 'web_search' }]);
    // The search runs; only the setting Anthropic's search lacks is reported.
    expect(r.sdkHttpResponse?.headers?.['x-switchyard-dropped']).toBe('tools[0].googleSearch.timeRangeFilter');
    expect(r.candidates?.[0].finishReason).toBe('STOP');
    if (multiByte) expect(Buffer.byteLength(r.text ?? '')).toBeGreaterThan((r.text ?? '').length);
    expectGrounding(r.text ?? '', r.candidates?.[0].groundingMetadata, answers(multiByte).plain);
  });

  it('generateContentStream: the grounding on the candidate’s last event, offsets over all its text', async () => {
    let text = '';
    let headers: Record<string, string> | undefined;
    const groundings = [];
    for await (const e of await sdk().models.generateContentStream({ model: 'on-claude', contents: 'What is in the tech news today?', config: { tools: [{ googleSearch: {} }] } })) {
      headers ??= e.sdkHttpResponse?.headers;
      const candidate = e.candidates?.[0];
      for (const part of candidate?.content?.parts ?? []) text += part.text ?? '';
      if (candidate?.groundingMetadata) groundings.push({ metadata: candidate.groundingMetadata, finish: candidate.finishReason });
    }
    expect(claude.requests.at(-1)!.body.tools).toEqual([{ type: 'web_search_20250305', name: 'web_search' }]);
    expect(headers?.['x-switchyard-dropped']).toBeUndefined();
    expect(groundings).toHaveLength(1);
    expect(groundings[0].finish).toBe('STOP');
    if (multiByte) expect(Buffer.byteLength(text)).toBeGreaterThan(text.length);
    expectGrounding(text, groundings[0].metadata, answers(multiByte).stream);
  });
});

it("googleSearch's excludeDomains (Vertex's) and Gemini 1.5's googleSearchRetrieval: Anthropic's blocked_domains, the same search", async () => {
  curly = false;
  const ask = (tools: Json[]) =>
    fetch(`${t.url}/v1beta/models/on-claude:generateContent`, {
      method: 'POST',
      headers: { 'x-goog-api-key': DEV_KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'Tech news?' }] }], tools }),
    });
  const excluded = await ask([{ googleSearch: { excludeDomains: ['spam.example'] } }]);
  expect(excluded.status).toBe(200);
  expect(claude.requests.at(-1)!.body.tools).toEqual([{ type: 'web_search_20250305', name: 'web_search', blocked_domains: ['spam.example'] }]);
  const retrieval = await ask([{ googleSearchRetrieval: { dynamicRetrievalConfig: { mode: 'MODE_DYNAMIC', dynamicThreshold: 0.5 } } }]);
  expect(retrieval.status).toBe(200);
  expect(retrieval.headers.get('x-switchyard-dropped')).toBe('tools[0].googleSearchRetrieval.dynamicRetrievalConfig');
  expect(claude.requests.at(-1)!.body.tools).toEqual([{ type: 'web_search_20250305', name: 'web_search' }]);
  const answer = (await retrieval.json()) as { candidates: Array<{ groundingMetadata?: { webSearchQueries?: string[] } }> };
  expect(answer.candidates[0].groundingMetadata?.webSearchQueries).toEqual(expected(blocksOf(answers(false).plain)).queries);
});

describe('googleSearch on a target with no search of its own', () => {
  it('an OpenAI-compatible chat server: answered without search, reported dropped', async () => {
    const r = await sdk().models.generateContent({ model: 'on-chat', contents: 'What is in the news?', config: { tools: [{ googleSearch: {} }] } });
    expect(r.text).toBe('No search here.');
    expect(r.candidates?.[0].groundingMetadata).toBeUndefined();
    expect(r.sdkHttpResponse?.headers?.['x-switchyard-dropped']).toBe('tools[0] (googleSearch)');
    const sent = chat.requests.at(-1)!.body;
    expect(sent.web_search).toBeUndefined();
    expect(sent.tools).toBeUndefined();
  });

  it("strict: Gemini's 400 naming the tool, and nothing sent upstream", async () => {
    const before = chat.requests.length;
    const error = await sdk({ 'x-switchyard-strict': 'true' })
      .models.generateContent({ model: 'on-chat', contents: 'What is in the news?', config: { tools: [{ googleSearch: {} }] } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(400);
    expect((error as ApiError).message).toContain('INVALID_ARGUMENT');
    expect((error as ApiError).message).toContain('tools[0]');
    expect(chat.requests.length).toBe(before);
  });
});
