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
 *   streamed as server-sent events: data: {"text": "...", "done": false}
 * The core owns sockets, SSE framing, retries and the OpenAI error envelope.
 */
import { defineHttpProvider, type ChatCompletion, type ChatCompletionChunk, type ProviderCall } from 'switchyard-gateway';
import { openAiStyleFailure, type SseJsonEvent } from 'switchyard-gateway/kit';

export interface Options {
  baseUrl: string;
  apiKey?: string;
}

/** The prompt: every message's text, one per line. */
function promptOf(call: ProviderCall): string {
  return call.request.messages.map((m) => \`\${m.role}: \${typeof m.content === 'string' ? m.content : ''}\`).join('\\n');
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
  capabilities: { streaming: true, tools: false },
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
    let first = true;
    return {
      push(event): ChatCompletionChunk {
        const data = (event as SseJsonEvent).data as { text: string; done: boolean };
        const delta = first ? { role: 'assistant' as const, content: data.text } : { content: data.text };
        first = false;
        return { id: \`chatcmpl-\${call.requestId}\`, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model: call.model, choices: [{ index: 0, delta, finish_reason: data.done ? 'stop' : null }] };
      },
    };
  },
  readError: openAiStyleFailure,
});
`,
    [`${name}.test.ts`]: `/** Offline test: a fake upstream on 127.0.0.1 and the real gateway loading this plugin by path. */
import { createServer, type Server } from 'node:http';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Gateway } from 'switchyard-gateway';

const here = path.dirname(fileURLToPath(import.meta.url));
let upstream: Server;
let gateway: Gateway;

beforeAll(async () => {
  upstream = createServer((req, res) => {
    let raw = '';
    req.on('data', (d) => (raw += d));
    req.on('end', () => {
      const body = JSON.parse(raw) as { prompt: string; stream: boolean };
      if (!body.stream) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ text: \`echo: \${body.prompt}\`, tokens_in: 3, tokens_out: 2 }));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end('data: {"text":"Hel","done":false}\\n\\ndata: {"text":"lo","done":true}\\n\\n');
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const dir = mkdtempSync(path.join(tmpdir(), '${name}-'));
  const config = path.join(dir, 'gateway.yaml');
  const url = \`http://127.0.0.1:\${(upstream.address() as { port: number }).port}\`;
  writeFileSync(config, \`keys: [{ name: test, key: sk-test-12345678 }]
providers:
  ${name}: { plugin: \${JSON.stringify(path.join(here, 'index.ts'))}, baseUrl: "\${url}" }
models:
  demo: { targets: [{ provider: ${name}, model: m1 }] }
log: { level: silent }
\`);
  gateway = await Gateway.start({ config, port: 0 });
});
afterAll(async () => {
  await gateway?.close();
  upstream?.close();
});

async function chat(body: object): Promise<Response> {
  return fetch(\`\${gateway.url}/v1/chat/completions\`, {
    method: 'POST',
    headers: { authorization: 'Bearer sk-test-12345678', 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'demo', messages: [{ role: 'user', content: 'hi' }], ...body }),
  });
}

it('answers a chat completion through the gateway', async () => {
  const res = await chat({});
  expect(res.status).toBe(200);
  const body = (await res.json()) as { model: string; choices: Array<{ message: { content: string } }>; usage: { total_tokens: number } };
  expect(body.model).toBe('m1');
  expect(body.choices[0].message.content).toBe('echo: user: hi');
  expect(body.usage.total_tokens).toBe(5);
});

it('streams', async () => {
  const text = await (await chat({ stream: true })).text();
  expect(text).toContain('"content":"Hel"');
  expect(text.endsWith('data: [DONE]\\n\\n')).toBe(true);
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
      onResponse(ctx) {
        env.log.debug({ reqId: ctx.id, stage: '${name}', status: ctx.status }, 'done');
      },
    };
  },
});
`,
    [`${name}.test.ts`]: `/** Offline test: the real gateway with the built-in mock provider and this stage loaded by path. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Gateway } from 'switchyard-gateway';

const here = path.dirname(fileURLToPath(import.meta.url));
let gateway: Gateway;

beforeAll(async () => {
  const dir = mkdtempSync(path.join(tmpdir(), '${name}-'));
  const config = path.join(dir, 'gateway.yaml');
  writeFileSync(config, \`keys: [{ name: test, key: sk-test-12345678 }]
providers:
  mock: { plugin: mock }
models:
  demo: { targets: [{ provider: mock, model: m1 }] }
pipeline: [auth, validate, { stage: \${JSON.stringify(path.join(here, 'index.ts'))}, options: { tag: hello, maxTokens: 100 } }, route, retry, transform-response, log]
log: { level: silent }
\`);
  gateway = await Gateway.start({ config, port: 0 });
});
afterAll(() => gateway?.close());

async function chat(body: object): Promise<Response> {
  return fetch(\`\${gateway.url}/v1/chat/completions\`, {
    method: 'POST',
    headers: { authorization: 'Bearer sk-test-12345678', 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'demo', messages: [{ role: 'user', content: 'hi' }], ...body }),
  });
}

it('tags responses', async () => {
  const res = await chat({});
  expect(res.status).toBe(200);
  expect(res.headers.get('x-${name}')).toBe('hello');
});

it('refuses over-long requests with an OpenAI-shaped 400', async () => {
  const res = await chat({ max_tokens: 1000 });
  expect(res.status).toBe(400);
  const body = (await res.json()) as { error: { param: string; code: string } };
  expect(body.error).toMatchObject({ param: 'max_tokens', code: 'invalid_request' });
});
`,
  };
}
