/**
 * Hosted web search and signed reasoning through POST /v1/responses on translated targets, with
 * the official openai SDK (plain and streamed) against fake Anthropic and Gemini upstreams on
 * loopback speaking their native wire formats:
 *
 * - a `web_search` tool reaches Anthropic as its server tool `web_search_20250305` (filters and
 *   location carried) and Gemini as `googleSearch`; what the provider's search did comes back as
 *   `web_search_call` items and `url_citation` annotations whose offsets cut the cited text out of
 *   the answer exactly (Anthropic's recorded answer, test/fixtures/anthropic/*web-search*; Gemini's
 *   byte offsets over a text with a multi-byte character);
 * - a target with no search of its own reports it dropped, or refuses it when strict;
 * - `store: false` with `include: ["reasoning.encrypted_content"]`: the provider's signed reasoning
 *   comes back as the reasoning item's `encrypted_content`, and sent back on the next turn it
 *   reaches the provider byte for byte (Anthropic's thinking signature and redacted data, Gemini's
 *   thought signature); garbage there is reported dropped, or refused when strict;
 * - and with the Anthropic SDK, a Messages client's `web_search_20250305` server tool on a Gemini
 *   target: Google Search, answered with server_tool_use / web_search_tool_result blocks and text
 *   blocks citing their pages, which the client can send back on its next turn.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DEV_KEY,
  expectValid,
  loadFixture,
  replay,
  startFakeUpstream,
  startTestGateway,
  streamAnswer,
  type FakeUpstream,
  type RecordedRequest,
  type ScriptedResponse,
  type TestGateway,
} from 'switchyard-gateway/kit/testing';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fixturesOf } from '../helpers/repo.ts';

type Json = Record<string, unknown>;

// ------------------------------------------------------------------ what the upstreams say

/** Signed reasoning as Anthropic sends it: the signature and redacted data are opaque base64 the gateway must not touch. */
const THOUGHT = 'The user wants a file. I will write it.';
const SIGNATURE = 'EqQBCkgIARABGAIiQL+/sig+with/slashes==';
const REDACTED = 'EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP';
const GEMINI_SIGNATURE = 'CiQB0e2Kb7Mgemini/thought+signature==';
const WRITE_ARGS = { path: 'hello.txt', content: 'hi' };
const DONE = 'The file is written.';

const anthropicEvent = (type: string, data: Json) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;

/** Anthropic: the recorded web search answers for a search request; else thinking and a tool call, then (given the result) text. */
function anthropicAnswer(req: RecordedRequest): ScriptedResponse {
  const body = req.body as { stream?: boolean; tools?: Json[]; messages: Array<{ role: string; content: unknown }> };
  if (body.tools?.some((t) => t.type === 'web_search_20250305')) return replay(loadFixture(fixturesOf('anthropic'), body.stream ? 'stream-web-search' : 'messages-web-search'));
  const answered = JSON.stringify(body.messages.at(-1)?.content).includes('tool_result');
  const message = { id: 'msg_think', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', stop_sequence: null, usage: { input_tokens: 50, output_tokens: 20 } };
  const blocks: Json[] = answered
    ? [{ type: 'text', text: DONE }]
    : [
        { type: 'thinking', thinking: THOUGHT, signature: SIGNATURE },
        { type: 'redacted_thinking', data: REDACTED },
        { type: 'tool_use', id: 'toolu_1', name: 'write_file', input: WRITE_ARGS },
      ];
  const stop = answered ? 'end_turn' : 'tool_use';
  if (!body.stream) return { status: 200, body: { ...message, content: blocks, stop_reason: stop } };
  const frames = [anthropicEvent('message_start', { message: { ...message, content: [], stop_reason: null } })];
  blocks.forEach((block, index) => {
    if (block.type === 'thinking') {
      frames.push(anthropicEvent('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } }));
      for (const piece of [THOUGHT.slice(0, 12), THOUGHT.slice(12)]) frames.push(anthropicEvent('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: piece } }));
      frames.push(anthropicEvent('content_block_delta', { index, delta: { type: 'signature_delta', signature: SIGNATURE } }));
    } else if (block.type === 'tool_use') {
      frames.push(anthropicEvent('content_block_start', { index, content_block: { ...block, input: {} } }));
      frames.push(anthropicEvent('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(WRITE_ARGS) } }));
    } else if (block.type === 'text') {
      frames.push(anthropicEvent('content_block_start', { index, content_block: { type: 'text', text: '' } }));
      frames.push(anthropicEvent('content_block_delta', { index, delta: { type: 'text_delta', text: block.text } }));
    } else frames.push(anthropicEvent('content_block_start', { index, content_block: block }));
    frames.push(anthropicEvent('content_block_stop', { index }));
  });
  frames.push(anthropicEvent('message_delta', { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 20 } }), anthropicEvent('message_stop', {}));
  return streamAnswer(frames);
}

/** Gemini: the grounded answer for a search request; else a signed thought and a function call, then text. */
function geminiAnswer(req: RecordedRequest): ScriptedResponse {
  const body = req.body as { tools?: Json[]; contents: Array<{ role: string; parts: Json[] }> };
  const stream = req.url.includes(':streamGenerateContent');
  if (body.tools?.some((t) => 'googleSearch' in t)) return replay(loadFixture(fixturesOf('gemini'), stream ? 'stream-google-search' : 'generate-google-search'));
  const answered = body.contents.at(-1)?.parts.some((p) => 'functionResponse' in p);
  const usageMetadata = { promptTokenCount: 40, candidatesTokenCount: 10, thoughtsTokenCount: 5, totalTokenCount: 55 };
  const parts = answered
    ? [{ text: DONE }]
    : [
        { text: THOUGHT, thought: true },
        { functionCall: { name: 'write_file', args: WRITE_ARGS }, thoughtSignature: GEMINI_SIGNATURE },
      ];
  const answer = (p: Json[], finish?: string) => ({
    candidates: [{ content: { role: 'model', parts: p }, index: 0, ...(finish ? { finishReason: finish } : {}) }],
    usageMetadata,
    modelVersion: 'gemini-2.5-flash',
  });
  if (!stream) return { status: 200, body: answer(parts, 'STOP') };
  // Streamed: the thought alone, then the signed call (or the text) with the finish.
  const events = parts.length > 1 ? [answer([parts[0]]), answer([parts[1]], 'STOP')] : [answer(parts, 'STOP')];
  return streamAnswer(events.map((e) => `data: ${JSON.stringify(e)}\r\n\r\n`));
}

/** A chat server: it runs no search of its own. */
function chatAnswer(req: RecordedRequest): ScriptedResponse {
  const message = { role: 'assistant', content: 'No search here.' };
  return {
    status: 200,
    body: {
      id: 'chatcmpl-1',
      object: 'chat.completion',
      created: 1,
      model: String(req.body.model),
      choices: [{ index: 0, message, finish_reason: 'stop' }],
      usage: { prompt_tokens: 5, completion_tokens: 4, total_tokens: 9 },
    },
  };
}

/** OpenAI's own Responses API (a pass-through target): its recorded answer. */
const openAiAnswer = (): ScriptedResponse => replay(loadFixture(fixturesOf('openai'), 'responses-reasoning-encrypted'));

/** Bedrock (Converse): its recorded signed-reasoning stream on /converse-stream, a recorded answer on /converse. */
function bedrockAnswer(req: RecordedRequest): ScriptedResponse {
  const stream = req.url.split('?')[0].endsWith('/converse-stream');
  return replay(loadFixture(fixturesOf('bedrock'), stream ? 'converse-stream-reasoning-claude' : 'converse-usage-cache-read'));
}

/** The signature in Bedrock's recorded stream, read from its decoded view. */
const BEDROCK_SIGNATURE = readFileSync(path.join(fixturesOf('bedrock'), 'converse-stream-reasoning-claude.events.jsonl'), 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((line) => JSON.parse(line).payload?.delta?.reasoningContent?.signature)
  .find((s) => typeof s === 'string') as string;

let t: TestGateway;
let aws: FakeUpstream;
let oai: FakeUpstream;
let claude: FakeUpstream;
let gemini: FakeUpstream;
let chat: FakeUpstream;
beforeAll(async () => {
  claude = await startFakeUpstream(anthropicAnswer);
  gemini = await startFakeUpstream(geminiAnswer);
  chat = await startFakeUpstream(chatAnswer);
  oai = await startFakeUpstream(openAiAnswer);
  aws = await startFakeUpstream(bedrockAnswer);
  t = await startTestGateway(`keys:
  - { name: dev, key: ${DEV_KEY} }
providers:
  claude: { plugin: anthropic, baseUrl: "${claude.url}", apiKey: test-anthropic-key }
  google: { plugin: gemini, baseUrl: "${gemini.url}", apiKey: test-gemini-key }
  compat: { plugin: openai, baseUrl: "${chat.url}/v1", apiKey: test-openai-key }
  oai: { plugin: openai, baseUrl: "${oai.url}/v1", apiKey: test-openai-key, nativeResponses: true }
  aws: { plugin: bedrock, region: us-east-1, endpoint: "${aws.url}", accessKeyId: AKIDHOSTEDTEST0001, secretAccessKey: hosted-test-secret-0123456789 }
models:
  on-bedrock: { targets: [{ provider: aws, model: "us.anthropic.claude-sonnet-4-20250514-v1:0" }] }
  on-openai: { targets: [{ provider: oai, model: gpt-5-mini }] }
  on-claude: { targets: [{ provider: claude, model: claude-sonnet-4-5 }] }
  on-gemini: { targets: [{ provider: google, model: gemini-2.5-flash }] }
  on-gemini-3: { targets: [{ provider: google, model: gemini-3-pro-preview }] }
  on-chat: { targets: [{ provider: compat, model: small-llm }] }
`);
});
afterAll(async () => {
  await t?.close();
  await claude?.close();
  await gemini?.close();
  await chat?.close();
  await oai?.close();
  await aws?.close();
});

const WRITE_TOOL: OpenAI.Responses.FunctionTool = {
  type: 'function',
  name: 'write_file',
  description: 'Write a file.',
  strict: false,
  parameters: { type: 'object', properties: { path: { type: 'string' }, content: { type: 'string' } }, required: ['path', 'content'] },
};

type Params = Omit<OpenAI.Responses.ResponseCreateParamsNonStreaming, 'stream'>;

/** One call, plain or streamed (the response assembled from its events, each checked against OpenAI's schema). */
async function respond(
  params: Params,
  stream: boolean,
  headers: Record<string, string> = {},
): Promise<{ response: OpenAI.Responses.Response; events: OpenAI.Responses.ResponseStreamEvent[]; dropped: string | null }> {
  const client = t.client();
  if (!stream) {
    const { data, response } = await client.responses.create({ ...params, stream: false }, { headers }).withResponse();
    expectValid('Response', data);
    return { response: data, events: [], dropped: response.headers.get('x-switchyard-dropped') };
  }
  const { data, response } = await client.responses.create({ ...params, stream: true }, { headers }).withResponse();
  const events: OpenAI.Responses.ResponseStreamEvent[] = [];
  for await (const event of data) {
    expectValid('ResponseStreamEvent', event);
    events.push(event);
  }
  const last = events.at(-1);
  if (last?.type !== 'response.completed') throw new Error(`the stream ended with ${last?.type}`);
  return { response: last.response, events, dropped: response.headers.get('x-switchyard-dropped') };
}

const searches = (r: OpenAI.Responses.Response) => r.output.filter((o): o is OpenAI.Responses.ResponseFunctionWebSearch => o.type === 'web_search_call');
const texts = (r: OpenAI.Responses.Response) => r.output.flatMap((o) => (o.type === 'message' ? o.content.filter((c): c is OpenAI.Responses.ResponseOutputText => c.type === 'output_text') : []));
/** Each url_citation as the URL and the text it cuts out of its part. */
const cited = (r: OpenAI.Responses.Response) =>
  texts(r).flatMap((part) => part.annotations.flatMap((a) => (a.type === 'url_citation' ? [{ url: a.url, title: a.title, text: part.text.slice(a.start_index, a.end_index) }] : [])));
const lastBody = (u: FakeUpstream) => u.requests.at(-1)!.body as Json;

// ------------------------------------------------------------------ web search

describe('a web_search tool on an Anthropic target: its server web search tool, and back', () => {
  const params: Params = {
    model: 'on-claude',
    input: 'What is in the tech news today?',
    tools: [{ type: 'web_search', filters: { allowed_domains: ['apple.com', 'mu.nu'] }, user_location: { type: 'approximate', country: 'US', city: 'Austin' } }],
    include: ['web_search_call.action.sources'],
    max_tool_calls: 3,
  };

  it('plain: web_search_20250305 goes up with the filters; web_search_call items and url_citation annotations come back', async () => {
    const { response, dropped } = await respond(params, false);
    const tools = lastBody(claude).tools as Json[];
    expect(tools).toEqual([
      { type: 'web_search_20250305', name: 'web_search', max_uses: 3, allowed_domains: ['apple.com', 'mu.nu'], user_location: { type: 'approximate', country: 'US', city: 'Austin' } },
    ]);
    expect(dropped).toBeNull();
    const calls = searches(response);
    expect(calls.map((c) => [c.status, c.action.type === 'search' && c.action.query])).toEqual([
      ['completed', 'tech news today September 26 2024'],
      ['completed', '"September 26 2024" tech news breaking'],
    ]);
    const first = calls[0].action as OpenAI.Responses.ResponseFunctionWebSearch.Search;
    expect(first.sources?.map((s) => s.url)).toContain('https://acecomments.mu.nu/?post=411647');
    // The search items come before the answer, as OpenAI orders them.
    expect(response.output.findIndex((o) => o.type === 'message')).toBeGreaterThan(response.output.findIndex((o) => o.type === 'web_search_call'));
    const citations = cited(response);
    expect(citations[0]).toEqual({
      url: 'https://acecomments.mu.nu/?post=411647',
      title: 'Daily Tech News 26 September 2024',
      text: "Caroline Ellison, Sam Bankman-Fried's right-hand woman in the FTX kerfuffle, has been sentenced to two years in prison for her part in the fuffling and ordered to pay $11 billion in restitution.",
    });
    expect(citations.length).toBeGreaterThan(2);
    expect(response.output_text).toContain('Based on the search results');
  });

  it('streamed: the web_search_call events, then annotation.added events whose offsets cut out the cited block', async () => {
    const { response, events } = await respond(params, true);
    expect(lastBody(claude).stream).toBe(true);
    const types = events.map((e) => e.type);
    const added = types.indexOf('response.web_search_call.in_progress');
    expect(types.slice(added, added + 3)).toEqual(['response.web_search_call.in_progress', 'response.web_search_call.searching', 'response.web_search_call.completed']);
    expect(searches(response).map((c) => c.action.type === 'search' && c.action.query)).toEqual(['tech news today September 26 2025']);
    const annotations = events.filter((e): e is OpenAI.Responses.ResponseOutputTextAnnotationAddedEvent => e.type === 'response.output_text.annotation.added');
    expect(annotations.length).toBeGreaterThan(0);
    const citations = cited(response);
    expect(citations.length).toBe(annotations.length);
    expect(citations[0].url).toMatch(/^https:\/\/www\.apple\.com\/newsroom\/2025\/09\//);
    expect(citations[0].text).toBe(
      "Apple today announced the grand reopening of Apple Ginza on Friday, September 26, located in the vibrant Ginza district where Apple's retail journey in Japan began more than two decades ago. Apple Ginza opens to customers Friday, September 26, at 10 a.m. JST.",
    );
  });
});

describe('a web_search tool on a Gemini target: Google Search grounding, and back', () => {
  const params: Params = { model: 'on-gemini', input: 'Who won Euro 2024?', tools: [{ type: 'web_search' }], include: ['web_search_call.action.sources'] };
  const FIRST = 'Spain won Euro 2024, defeating England 2-1 in the final.';
  const SECOND = 'This victory marks Spain\u2019s record fourth European Championship title.';

  for (const stream of [false, true]) {
    it(`${stream ? 'streamed' : 'plain'}: googleSearch goes up; each query a web_search_call, each supported segment a url_citation over exactly its text`, async () => {
      const { response, dropped } = await respond(params, stream);
      expect(lastBody(gemini).tools).toEqual([{ googleSearch: {} }]);
      expect(dropped).toBeNull();
      expect(searches(response).map((c) => c.action.type === 'search' && c.action.query)).toEqual(['UEFA Euro 2024 winner', 'who won euro 2024']);
      expect((searches(response)[0].action as OpenAI.Responses.ResponseFunctionWebSearch.Search).sources).toHaveLength(2);
      expect(cited(response).map((c) => [c.title, c.text])).toEqual([
        ['aljazeera.com', FIRST],
        ['aljazeera.com', SECOND],
        ['uefa.com', SECOND],
      ]);
    });
  }

  it('Gemini 2.x takes no Google Search beside function declarations: the search is reported dropped, the functions kept; Gemini 3 gets both', async () => {
    const tools: OpenAI.Responses.Tool[] = [WRITE_TOOL, { type: 'web_search' }];
    const { dropped } = await respond({ model: 'on-gemini', input: 'Write hello.txt.', tools }, false);
    expect(dropped).toBe('tools[1] (web_search)');
    expect((lastBody(gemini).tools as Json[]).map((t) => Object.keys(t)[0])).toEqual(['functionDeclarations']);
    const three = await respond({ model: 'on-gemini-3', input: 'Write hello.txt.', tools }, false);
    expect(three.dropped).toBeNull();
    expect((lastBody(gemini).tools as Json[]).map((t) => Object.keys(t)[0])).toEqual(['functionDeclarations', 'googleSearch']);
  });

  it('settings Google Search has no place for are reported dropped, the search still runs', async () => {
    const { dropped } = await respond({ ...params, tools: [{ type: 'web_search', filters: { allowed_domains: ['uefa.com'] } }] }, false);
    expect(lastBody(gemini).tools).toEqual([{ googleSearch: {} }]);
    expect(dropped).toBe('tools[0] (web_search allowed_domains)');
  });
});

describe('a target with no search of its own', () => {
  const params: Params = { model: 'on-chat', input: 'Search the web, please.', tools: [{ type: 'web_search' }] };

  it('drops the tool and says so; nothing of it reaches the chat server', async () => {
    const { response, dropped } = await respond(params, false);
    expect(dropped).toBe('tools[0] (web_search)');
    expect(lastBody(chat)).not.toHaveProperty('web_search');
    expect(response.output_text).toBe('No search here.');
  });

  it('refuses it with a 400 naming the tool when the request is strict', async () => {
    const error = await respond(params, false, { 'x-switchyard-strict': 'true' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('tools[0]');
  });

  it("Codex's cached-only search (external_web_access: false) is not turned into a live one", async () => {
    const { dropped } = await respond({ ...params, model: 'on-claude', input: 'hello', tools: [{ type: 'web_search', external_web_access: false } as OpenAI.Responses.WebSearchTool] }, false);
    expect(dropped).toBe('tools[0] (web_search)');
    expect(lastBody(claude).tools).toBeUndefined();
  });
});

// ------------------------------------------------------------------ signed reasoning

/** Two turns as a stateless agent makes them: the first answer's items sent back with the tool's output. */
async function twoTurns(model: string, stream: boolean): Promise<{ first: OpenAI.Responses.Response; second: OpenAI.Responses.Response }> {
  const input: OpenAI.Responses.ResponseInputItem[] = [{ role: 'user', content: 'Write hello.txt.' }];
  const params = { model, tools: [WRITE_TOOL], store: false, include: ['reasoning.encrypted_content' as const] };
  const { response: first } = await respond({ ...params, input }, stream);
  const call = first.output.find((o) => o.type === 'function_call')!;
  const next = [...input, ...(first.output as OpenAI.Responses.ResponseInputItem[]), { type: 'function_call_output' as const, call_id: call.call_id, output: 'written' }];
  const { response: second } = await respond({ ...params, input: next }, stream);
  return { first, second };
}

const reasoningOf = (r: OpenAI.Responses.Response) => r.output.filter((o): o is OpenAI.Responses.ResponseReasoningItem => o.type === 'reasoning');

describe('signed reasoning round-trips as encrypted_content (store: false)', () => {
  for (const stream of [false, true]) {
    it(`${stream ? 'streamed' : 'plain'}, Anthropic: the thinking signature and redacted data reach turn 2 byte for byte`, async () => {
      const { first, second } = await twoTurns('on-claude', stream);
      const items = reasoningOf(first);
      expect(items.length).toBeGreaterThan(0);
      expect(items.every((i) => typeof i.encrypted_content === 'string' && !i.encrypted_content.includes(SIGNATURE))).toBe(true);
      const turn2 = lastBody(claude).messages as Array<{ role: string; content: Json[] }>;
      const assistant = turn2.find((m) => m.role === 'assistant')!;
      expect(assistant.content.slice(0, 2)).toEqual([
        { type: 'thinking', thinking: THOUGHT, signature: SIGNATURE },
        { type: 'redacted_thinking', data: REDACTED },
      ]);
      expect(assistant.content[2]).toMatchObject({ type: 'tool_use', id: 'toolu_1', name: 'write_file' });
      expect(texts(second).map((p) => p.text)).toEqual([DONE]);
    });

    it(`${stream ? 'streamed' : 'plain'}, Gemini: the thought signature goes back on its function call`, async () => {
      const { first } = await twoTurns('on-gemini', stream);
      expect(reasoningOf(first).some((i) => i.encrypted_content)).toBe(true);
      const contents = lastBody(gemini).contents as Array<{ role: string; parts: Json[] }>;
      const model = contents.find((c) => c.role === 'model')!;
      const call = model.parts.find((p) => 'functionCall' in p)!;
      expect(call.thoughtSignature).toBe(GEMINI_SIGNATURE);
    });
  }

  it('streamed, Bedrock: the recorded reasoningContent signature reaches turn 2 byte for byte', async () => {
    const input: OpenAI.Responses.ResponseInputItem[] = [{ role: 'user', content: 'Hello' }];
    const params = { model: 'on-bedrock', store: false, include: ['reasoning.encrypted_content' as const] };
    const { response: first } = await respond({ ...params, input }, true);
    expect(reasoningOf(first)[0].encrypted_content).toMatch(/^swy-rs1\./);
    await respond({ ...params, input: [...input, ...(first.output as OpenAI.Responses.ResponseInputItem[]), { role: 'user', content: 'What is 20 + 1?' }] }, false);
    const messages = lastBody(aws).messages as Array<{ role: string; content: Json[] }>;
    const reasoning = messages[1].content[0] as { reasoningContent: { reasoningText: { text: string; signature: string } } };
    expect(BEDROCK_SIGNATURE).toMatch(/^Eu0CCkgI/);
    expect(reasoning.reasoningContent.reasoningText.signature).toBe(BEDROCK_SIGNATURE);
  });

  it("moved to OpenAI's own Responses API (a pass-through), the gateway's reasoning items are left out: OpenAI could not decrypt them", async () => {
    const { first } = await twoTurns('on-claude', false);
    const call = first.output.find((o) => o.type === 'function_call')!;
    const input = [
      { role: 'user' as const, content: 'Write hello.txt.' },
      ...(first.output as OpenAI.Responses.ResponseInputItem[]),
      { type: 'function_call_output' as const, call_id: call.call_id, output: 'written' },
    ];
    // The answer is OpenAI's recorded one, passed through untranslated.
    await t.client().responses.create({ model: 'on-openai', tools: [WRITE_TOOL], store: false, include: ['reasoning.encrypted_content'], input });
    const sent = lastBody(oai).input as Json[];
    expect(sent.map((i) => i.type ?? 'message')).toEqual(['message', 'function_call', 'function_call_output']);
  });

  it('without include, the reasoning items carry no encrypted_content', async () => {
    const { response } = await respond({ model: 'on-claude', input: 'Write hello.txt.', tools: [WRITE_TOOL], store: false }, false);
    expect(reasoningOf(response).every((i) => i.encrypted_content == null)).toBe(true);
  });

  const garbage = (model: string): Params => ({
    model,
    tools: [WRITE_TOOL],
    store: false,
    input: [
      { role: 'user', content: 'Write hello.txt.' },
      { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'gAAAAABotherProvidersEncryptedReasoning' },
      { role: 'assistant', content: 'Sure.' },
      { role: 'user', content: 'Go on.' },
    ],
  });

  it('an encrypted_content the gateway did not write is dropped and reported, never sent up', async () => {
    const { dropped } = await respond(garbage('on-claude'), false);
    expect(dropped).toBe('input[1].encrypted_content (reasoning)');
    expect(JSON.stringify(lastBody(claude).messages)).not.toContain('gAAAAAB');
  });

  it('and refused with a 400 naming it when the request is strict', async () => {
    const error = await respond(garbage('on-claude'), false, { 'x-switchyard-strict': 'true' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('input[1].encrypted_content');
  });
});

// ------------------------------------------------------------------ the Messages ingress

describe("a Messages client's web search server tool on a Gemini target", () => {
  const anthropic = () => new Anthropic({ apiKey: DEV_KEY, baseURL: t.url, maxRetries: 0 });
  const body: Anthropic.MessageCreateParamsNonStreaming = {
    model: 'on-gemini',
    max_tokens: 500,
    tools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 2 }],
    messages: [{ role: 'user', content: 'Who won Euro 2024?' }],
  };
  const SECOND = 'This victory marks Spain\u2019s record fourth European Championship title.';

  const expectSearched = (message: Anthropic.Message) => {
    const uses = message.content.filter((b) => b.type === 'server_tool_use');
    expect(uses.map((b) => b.input)).toEqual([{ query: 'UEFA Euro 2024 winner' }, { query: 'who won euro 2024' }]);
    const results = message.content.filter((b): b is Anthropic.WebSearchToolResultBlock => b.type === 'web_search_tool_result');
    expect(results.map((b) => b.tool_use_id)).toEqual(uses.map((b) => (b as Anthropic.ServerToolUseBlock).id));
    expect((results[0].content as Anthropic.WebSearchResultBlock[]).map((r) => r.title)).toEqual(['aljazeera.com', 'uefa.com']);
  };

  it('plain: googleSearch goes up (max_uses reported), the searches and cited text blocks come back', async () => {
    const { data, response } = await anthropic().messages.create(body).withResponse();
    expect(lastBody(gemini).tools).toEqual([{ googleSearch: {} }]);
    expect(response.headers.get('x-switchyard-dropped')).toBe('tools[0] (web_search_20250305 max_uses)');
    expectSearched(data);
    expect(data.usage.server_tool_use).toEqual({ web_search_requests: 2 });
    const cited = data.content.filter((b): b is Anthropic.TextBlock => b.type === 'text' && !!b.citations?.length);
    expect(cited.map((b) => [b.text, b.citations!.map((c) => (c as Anthropic.CitationsWebSearchResultLocation).title)])).toEqual([
      ['Spain won Euro 2024, defeating England 2-1 in the final.', ['aljazeera.com']],
      [SECOND, ['aljazeera.com', 'uefa.com']],
    ]);
    // The answer's text is whole across its blocks.
    expect(data.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('')).toBe(`Spain won Euro 2024, defeating England 2-1 in the final. ${SECOND}`);

    // The client sends the answer back as it came: the past search is no 400 on the next turn.
    const next = await anthropic().messages.create({ ...body, messages: [...body.messages, { role: 'assistant', content: data.content }, { role: 'user', content: 'And in 2020?' }] });
    expect(next.type).toBe('message');
    const contents = lastBody(gemini).contents as Array<{ role: string; parts: Json[] }>;
    expect(contents.map((c) => c.role)).toEqual(['user', 'model', 'user']);
  });

  it('streamed: the SDK assembles the same search blocks and a cited text block', async () => {
    const message = await anthropic().messages.stream(body).finalMessage();
    expect(lastBody(gemini).tools).toEqual([{ googleSearch: {} }]);
    expectSearched(message);
    const cited = message.content.filter((b): b is Anthropic.TextBlock => b.type === 'text' && !!b.citations?.length);
    expect(cited).toHaveLength(1);
    expect(cited[0].citations!.map((c) => (c as Anthropic.CitationsWebSearchResultLocation).cited_text)).toEqual(['Spain won Euro 2024, defeating England 2-1 in the final.', SECOND, SECOND]);
  });
});
