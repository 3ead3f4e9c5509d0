/** The example plugins, loaded by path from plugins/examples/gateway.example.yaml. */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { expectValid, failureOf, type FakeUpstream, logLineFor, startFakeUpstream, startTestGateway, type TestGateway } from 'switchyard-gateway/kit/testing';
import { ROOT } from '../helpers/repo.ts';

// Answers in Ollama's native format: one JSON object, or NDJSON lines when streaming.
const created = '2024-07-22T20:33:28.123648Z';
const line = (content: string, done = false) =>
  `${JSON.stringify({ model: 'llama3.2', created_at: created, message: { role: 'assistant', content }, done, ...(done ? { done_reason: 'stop', prompt_eval_count: 26, eval_count: 9 } : {}) })}\n`;

let ollama: FakeUpstream;
let t: TestGateway;

beforeAll(async () => {
  ollama = await startFakeUpstream((req) => {
    if (req.body.model !== 'llama3.2') return { status: 404, body: { error: `model "${req.body.model}" not found, try pulling it first` } };
    if (!req.body.stream) return { body: JSON.parse(line('The sky is blue because of Rayleigh scattering.', true)) };
    return { status: 200, headers: { 'content-type': 'application/x-ndjson' }, chunks: [line('The sky'), line(' is blue'), line(' because of Rayleigh scattering.'), line('', true)] };
  });
  t = await startTestGateway({ file: path.join(ROOT, 'plugins/examples/gateway.example.yaml') }, { env: { OLLAMA_URL: ollama.url } });
});
afterAll(async () => {
  await t.close();
  await ollama.close();
});

const client = () => new OpenAI({ baseURL: t.baseURL, apiKey: 'sk-switchyard-dev', maxRetries: 0 });

describe('example provider: ollama-native', () => {
  it('translates a chat request to /api/chat and the answer back', async () => {
    const r = await client().chat.completions.create({
      model: 'llama',
      temperature: 0.1,
      max_tokens: 50,
      stop: 'END',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Why is the sky blue?' },
      ],
    });
    expectValid('CreateChatCompletionResponse', r);
    expect(r.choices[0].message.content).toBe('The sky is blue because of Rayleigh scattering.');
    expect(r.model).toBe('llama3.2');
    expect(r.usage).toEqual({ prompt_tokens: 26, completion_tokens: 9, total_tokens: 35 });
    expect(ollama.requests.at(-1)!.url).toBe('/api/chat');
    expect(ollama.requests.at(-1)!.body).toEqual({
      model: 'llama3.2',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Why is the sky blue?' },
      ],
      stream: false,
      options: { temperature: 0.1, num_predict: 50, stop: ['END'] },
      keep_alive: '5m',
    });
  });

  it('streams NDJSON as chat.completion.chunk events', async () => {
    const stream = await client().chat.completions.create({ model: 'llama', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'Why?' }] });
    let text = '';
    const chunks = [];
    for await (const chunk of stream) {
      expectValid('CreateChatCompletionStreamResponse', chunk);
      chunks.push(chunk);
      text += chunk.choices[0]?.delta.content ?? '';
    }
    expect(text).toBe('The sky is blue because of Rayleigh scattering.');
    expect(chunks.at(-1)!.usage).toEqual({ prompt_tokens: 26, completion_tokens: 9, total_tokens: 35 });
  });

  it('rejects what Ollama cannot do with a 400 naming the parameter', async () => {
    const err = await failureOf(
      client().chat.completions.create({ model: 'llama', messages: [{ role: 'user', content: 'x' }], tools: [{ type: 'function', function: { name: 'f', parameters: {} } }] }),
    );
    expect(err.status).toBe(400);
    expect(err.code).toBe('unsupported_parameter');
    expect(err.param).toBe('tools');
  });
});

describe('example stage: team-policy', () => {
  it('tags the response and the request with the key team', async () => {
    const { response } = await client()
      .chat.completions.create({ model: 'demo', messages: [{ role: 'user', content: 'hello' }] })
      .withResponse();
    expect(response.headers.get('x-team')).toBe('platform');
    const reqId = response.headers.get('x-request-id')!;
    await logLineFor(t, reqId);
  });

  it('blocks a request carrying a credential before any provider sees it', async () => {
    const before = ollama.requests.length;
    const err = await failureOf(client().chat.completions.create({ model: 'llama', messages: [{ role: 'user', content: 'my key is AKIAIOSFODNN7EXAMPLE, is it valid?' }] }));
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.param).toBe('messages');
    expect(err.message).toContain('blocked by the gateway policy');
    expect(ollama.requests.length).toBe(before);
  });
});
