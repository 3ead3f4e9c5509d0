/**
 * Files written by `switchyard plugin new`. They import only what a plugin published on its own
 * can: `switchyard-gateway` (the contract) and `switchyard-gateway/kit` (helpers), so a scaffolded
 * plugin works unchanged inside this repository, in a project that installed the package, or as
 * its own package.
 */

export function providerTemplate(name: string): Record<string, string> {
  return {
    'index.ts': `/**
 * ${name}: a Switchyard provider plugin. It speaks a small JSON API; replace the three
 * transforms with your provider's real format:
 *   POST {baseUrl}/generate {"model", "prompt", "stream"} → {"text", "tokens_in", "tokens_out"}
 *   streamed as server-sent events: data: {"text": "...", "done": false}, the last one with
 *   "done": true and the token counts; errors as {"error": {"message", "type"}}
 * The core owns sockets, SSE framing, retries and the OpenAI error envelope.
 */
import { defineHttpProvider, type ChatCompletion, type ChatCompletionChunk, type ProviderCall } from 'switchyard-gateway';
import { ChunkBuilder, openAiStyleFailure, type SseJsonEvent } from 'switchyard-gateway/kit';

export interface Options {
  baseUrl: string;
  apiKey?: string;
}

/** The prompt: every message's text, one per line. */
function promptOf(call: ProviderCall): string {
  return call.request.messages.map((m) => \`\${m.role}: \${typeof m.content === 'string' ? m.content : ''}\`).join('\\n');
}

/** One server-sent event of a streamed answer. */
interface StreamEvent {
  text: string;
  done: boolean;
  tokens_in?: number;
  tokens_out?: number;
}

export default defineHttpProvider<Options>({
  id: '${name}',
  optionsSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['baseUrl'],
    properties: { baseUrl: { type: 'string', pattern: '^https?://' }, apiKey: { type: 'string' } },
  },
  secretOptions: ['apiKey'],
  // What this API can honour: the core refuses or drops the rest, and the conformance battery runs what is declared.
  capabilities: { streaming: true, streamUsage: true, tools: false },
  endpoint: (options) => ({ baseUrl: options.baseUrl, headers: options.apiKey ? { authorization: \`Bearer \${options.apiKey}\` } : undefined }),
  buildRequest: (call) => ({ path: '/generate', body: { model: call.model, prompt: promptOf(call), stream: call.stream } }),
  toCompletion(body, call): ChatCompletion {
    const b = body as { text: string; tokens_in: number; tokens_out: number };
    return {
      id: \`chatcmpl-\${call.requestId}\`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: call.model,
      choices: [{ index: 0, message: { role: 'assistant', content: b.text }, finish_reason: 'stop' }],
      usage: { prompt_tokens: b.tokens_in, completion_tokens: b.tokens_out, total_tokens: b.tokens_in + b.tokens_out },
    };
  },
  createStreamTranslator(call) {
    const chunks = new ChunkBuilder(call); // one id and model per stream; the role on the first delta
    return {
      push(event): ChatCompletionChunk[] {
        const data = (event as SseJsonEvent).data as StreamEvent;
        const out = [chunks.delta({ content: data.text }, data.done ? 'stop' : null)];
        // The usage chunk ends the stream; the core passes it on only to clients that asked (stream_options.include_usage).
        if (data.done && data.tokens_in !== undefined && data.tokens_out !== undefined) {
          out.push(chunks.usage({ prompt_tokens: data.tokens_in, completion_tokens: data.tokens_out, total_tokens: data.tokens_in + data.tokens_out }));
        }
        return out;
      },
    };
  },
  readError: openAiStyleFailure,
});
`,
    [`${name}.test.ts`]: `/**
 * Offline tests: fake upstreams on 127.0.0.1 and the real gateway loading this plugin by path.
 * The answers below are what the template's API sends; once the plugin speaks your provider's
 * format, replace them with recordings of its real answers (\`loadFixture\` and \`replay\`).
 */
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { CONFORMANCE_SECRET, chatRequests, fakeUpstream, runConformance, streamAnswer, useTestGateway, type RecordedRequest, type ScriptedResponse } from 'switchyard-gateway/kit/testing';
import plugin from './index.ts';

const PLUGIN = fileURLToPath(new URL('./index.ts', import.meta.url));

const answer = (req: RecordedRequest): ScriptedResponse => ({ status: 200, body: { text: \`echo: \${req.body.prompt}\`, tokens_in: 3, tokens_out: 2 } });
const stream = (): ScriptedResponse => streamAnswer(['data: {"text":"Hel","done":false}\\n\\n', 'data: {"text":"lo","done":true,"tokens_in":3,"tokens_out":2}\\n\\n']);
const failure = (status: number, type: string) => (): ScriptedResponse => ({ status, body: { error: { message: \`\${type} (HTTP \${status})\`, type } } });

// The battery every provider passes: a client cannot tell this provider from the others.
runConformance({
  name: '${name}',
  plugin,
  provider: (url) => ({ plugin: PLUGIN, baseUrl: url, apiKey: CONFORMANCE_SECRET }),
  model: 'm1',
  scenarios: {
    text: { respond: answer, text: 'echo: user: Hello' },
    textStream: { respond: stream, text: 'Hello' },
    errors: { 400: failure(400, 'invalid_request_error'), 401: failure(401, 'authentication_error'), 429: failure(429, 'rate_limit_error'), 500: failure(500, 'server_error') },
  },
});

// This provider's own behaviour: what it sends upstream, and what the client gets back.
const upstream = fakeUpstream((req) => (req.body.stream ? stream() : answer(req)));
const t = useTestGateway(
  () => ({
    providers: { '${name}': { plugin: PLUGIN, baseUrl: upstream.url, apiKey: 'sk-upstream-test' } },
    models: { demo: { targets: [{ provider: '${name}', model: 'm1' }] } },
  }),
  { upstreams: [upstream] },
);
const { chat, streamed } = chatRequests(t, { model: 'demo' });

it('sends the prompt with its key and answers a chat completion', async () => {
  const r = await chat();
  expect(upstream.requests[0]).toMatchObject({ url: '/generate', headers: { authorization: 'Bearer sk-upstream-test' }, body: { model: 'm1', prompt: 'user: hi', stream: false } });
  expect(r.model).toBe('m1');
  expect(r.choices[0].message.content).toBe('echo: user: hi');
  expect(r.usage?.total_tokens).toBe(5);
});

it('streams, with usage when asked', async () => {
  const { text, finishes, chunks } = await streamed({ stream_options: { include_usage: true } });
  expect(text).toBe('Hello');
  expect(finishes).toEqual(['stop']);
  expect(chunks.at(-1)?.usage?.total_tokens).toBe(5);
});
`,
  };
}

export function stageTemplate(name: string): Record<string, string> {
  return {
    'index.ts': `/**
 * ${name}: a Switchyard pipeline stage. \`handle\` runs on the way in (before \`await next()\`)
 * and on the way back (after it); \`onResponse\` after the response is complete.
 */
import { defineStage } from 'switchyard-gateway';
import { GatewayError } from 'switchyard-gateway/kit';

export interface Options {
  /** Value of the x-${name} response header. */
  tag: string;
  /** Refuse requests asking for more than this many completion tokens. */
  maxTokens?: number;
}

export default defineStage<Options>({
  apiVersion: 2,
  kind: 'stage',
  name: '${name}',
  optionsSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['tag'],
    properties: { tag: { type: 'string' }, maxTokens: { type: 'integer', minimum: 1 } },
  },
  create(options, env) {
    return {
      name: '${name}',
      async handle(ctx, next) {
        const asked = ctx.body.max_completion_tokens ?? ctx.body.max_tokens;
        if (options.maxTokens && typeof asked === 'number' && asked > options.maxTokens) {
          throw new GatewayError('invalid_request', \`max_tokens may be at most \${options.maxTokens} here\`, { param: 'max_tokens' });
        }
        ctx.responseHeaders['x-${name}'] = options.tag;
        await next();
      },
      onResponse(ctx, outcome) {
        env.log.debug({ reqId: ctx.id, stage: '${name}', status: outcome.status }, 'done');
      },
    };
  },
});
`,
    [`${name}.test.ts`]: `/** Offline tests: the real gateway with this stage loaded by path in its pipeline. */
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { CONFORMANCE_SECRET, chatRequests, failureOf, runConformance, streamAnswer, useTestGateway, type ScriptedResponse } from 'switchyard-gateway/kit/testing';

const STAGE = fileURLToPath(new URL('./index.ts', import.meta.url));
const pipeline = ['auth', 'validate', { stage: STAGE, options: { tag: 'hello', maxTokens: 100 } }, 'route', 'retry', 'transform-response', 'log'];

// OpenAI-shaped answers from a fake upstream, for the built-in openai provider behind the stage.
const completion = (message: object, finish: string) => ({
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1,
  model: 'gpt-test',
  choices: [{ index: 0, message: { role: 'assistant', content: null, ...message }, finish_reason: finish }],
  usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 },
});
const chunk = (delta: object, finish: string | null, usage: object | null = null) =>
  \`data: \${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'gpt-test', choices: usage ? [] : [{ index: 0, delta, finish_reason: finish }], usage })}\\n\\n\`;
const usage = { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 };
const toolCall = { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } };
const failure = (status: number) => (): ScriptedResponse => ({ status, body: { error: { message: \`failed (HTTP \${status})\`, type: 'server_error', param: null, code: null } } });

// The battery every provider passes, with this stage in the pipeline: the stage keeps the gateway's answers OpenAI's.
runConformance({
  name: 'upstream',
  plugin: { capabilities: { streaming: true, tools: true } },
  provider: (url) => ({ plugin: 'openai', baseUrl: url, apiKey: CONFORMANCE_SECRET }),
  model: 'gpt-test',
  pipeline,
  scenarios: {
    text: { respond: () => ({ status: 200, body: completion({ content: 'Hello there' }, 'stop') }), text: 'Hello there' },
    textStream: { respond: () => streamAnswer([chunk({ role: 'assistant', content: 'Hel' }, null), chunk({ content: 'lo' }, 'stop'), chunk({}, null, usage), 'data: [DONE]\\n\\n']), text: 'Hello' },
    toolCall: { respond: () => ({ status: 200, body: completion({ tool_calls: [toolCall] }, 'tool_calls') }), toolName: 'get_weather' },
    toolCallStream: {
      respond: () => streamAnswer([chunk({ role: 'assistant', tool_calls: [{ index: 0, ...toolCall }] }, null), chunk({}, 'tool_calls'), 'data: [DONE]\\n\\n']),
      toolName: 'get_weather',
    },
    errors: { 400: failure(400), 401: failure(401), 429: failure(429), 500: failure(500) },
  },
});

// This stage's own behaviour, in front of the built-in mock provider.
const t = useTestGateway(() => ({ providers: { mock: { plugin: 'mock' } }, models: { demo: { targets: [{ provider: 'mock', model: 'm1' }] } }, pipeline }));
const { chat } = chatRequests(t, { model: 'demo' });

it('tags responses', async () => {
  const { response } = await chat().withResponse();
  expect(response.status).toBe(200);
  expect(response.headers.get('x-${name}')).toBe('hello');
});

it('refuses over-long requests with an OpenAI-shaped 400', async () => {
  const err = await failureOf(chat({ max_tokens: 1000 }));
  expect(err.status).toBe(400);
  expect(err).toMatchObject({ param: 'max_tokens', code: 'invalid_request' });
});
`,
  };
}
