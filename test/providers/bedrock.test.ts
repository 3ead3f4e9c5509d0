/** The bedrock provider end to end: signed native requests, recorded answers and event streams, errors. */
import { describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { EventStreamCodec } from '@smithy/core/event-streams';
import { fromUtf8, toUtf8 } from '@smithy/core/serde';
import {
  chatRequests,
  expectValid,
  failureOf,
  fakeUpstream,
  loadFixture,
  logLineFor,
  readFixtureFile,
  readSseEvents,
  replay,
  streamAnswer,
  useTestGateway,
  type RecordedRequest,
  type ScriptedResponse,
} from 'switchyard-gateway/kit/testing';
import { configYaml, fixturesOf } from '../helpers/repo.ts';
import { expectedSignature, type AwsCredentials } from '../helpers/sigv4.ts';

const f = (name: string) => loadFixture(fixturesOf('bedrock'), name);
const AKID = 'AKIDBEDROCKTEST0001';
const SECRET = 'bedrock-test-secret-key-0123456789';
const ENV = { AWS_ACCESS_KEY_ID: 'ASIAENVTEST0000002', AWS_SECRET_ACCESS_KEY: 'env-secret-key-9876543210', AWS_SESSION_TOKEN: 'env-session-token-abcdef' };
const NOVA = 'us.amazon.nova-micro-v1:0';
const ARN = 'arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-sonnet-4-5-20250929-v1:0';

const bedrock = fakeUpstream(() => replay(f('converse-basic-system')));
const t = useTestGateway(
  () =>
    configYaml({
      providers: [
        `  aws: { plugin: bedrock, region: us-east-1, endpoint: "${bedrock.url}", accessKeyId: ${AKID}, secretAccessKey: ${SECRET}, maxTokens: 512 }`,
        `  fromenv: { plugin: bedrock, region: eu-west-3, endpoint: "${bedrock.url}" }`,
      ].join('\n'),
      models: [
        `  nova: { retry: { attempts: 1 }, targets: [{ provider: aws, model: "${NOVA}" }] }`,
        `  claude: { retry: { attempts: 1 }, targets: [{ provider: aws, model: "${ARN}" }] }`,
        `  envnova: { retry: { attempts: 1 }, targets: [{ provider: fromenv, model: "${NOVA}" }] }`,
        `  patient: { retry: { attempts: 3, backoff: { initialMs: 1, maxMs: 1 } }, targets: [{ provider: aws, model: "${NOVA}" }] }`,
        `  lenient: { retry: { attempts: 1 }, dropUnsupportedParams: true, targets: [{ provider: aws, model: "${NOVA}" }] }`,
      ].join('\n'),
    }),
  // The `fromenv` provider names no keys: it must take them from the standard variables.
  { upstreams: [bedrock], processEnv: ENV },
);

const { chat, streamed, post } = chatRequests(t, { model: 'nova' });
const sent = () => bedrock.requests.at(-1)!;

// ------------------------------------------------------------------ event-stream frames

const codec = new EventStreamCodec(toUtf8, fromUtf8);
type Frame = { headers: Record<string, string>; payload: unknown };
const framesOf = (name: string): Frame[] =>
  readFixtureFile(fixturesOf('bedrock'), `${name}.events.jsonl`)
    .toString('utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Frame);
/** Frames encoded with the AWS SDK's codec, one write each. */
function encode(frames: Frame[]): Buffer[] {
  return frames.map(({ headers, payload }) => {
    const h: Record<string, { type: 'string'; value: string }> = {};
    for (const [k, v] of Object.entries(headers)) h[k] = { type: 'string', value: v };
    return Buffer.from(codec.encode({ headers: h, body: fromUtf8(JSON.stringify(payload)) }));
  });
}
const exception = (type: string, message: string): Frame => ({ headers: { ':message-type': 'exception', ':exception-type': type, ':content-type': 'application/json' }, payload: { message } });
const eventStream = (chunks: Buffer[], extra: Partial<ScriptedResponse> = {}) => streamAnswer(chunks, { headers: { 'content-type': 'application/vnd.amazon.eventstream' }, ...extra });

// ------------------------------------------------------------------ signature check

/** Re-signs what arrived with the AWS SDK's signer, the same credentials and the date it carries. */
async function expectSignedBy(req: RecordedRequest, credentials: AwsCredentials, region: string): Promise<void> {
  const expected = await expectedSignature(req, credentials, region);
  expect(req.headers.authorization).toBe(expected?.authorization);
  expect(req.headers['x-amz-content-sha256']).toBe(expected?.contentSha256);
}

describe('signed requests', () => {
  it('POST /model/{id}/converse, SigV4 over host, body and headers; the exact Converse body', async () => {
    const r = await chat({
      messages: [
        { role: 'system', content: 'You are a chatbot.' },
        { role: 'user', content: 'Hello!' },
      ],
      temperature: 0.5,
      stop: ['END'],
    });
    expectValid('CreateChatCompletionResponse', r);
    expect(sent().method).toBe('POST');
    expect(sent().url).toBe('/model/us.amazon.nova-micro-v1%3A0/converse');
    expect(sent().headers['content-type']).toBe('application/json');
    expect(sent().headers.host).toBe(new URL(bedrock.url).host);
    expect(sent().headers['x-amz-date']).toMatch(/^\d{8}T\d{6}Z$/);
    expect(sent().headers['x-amz-security-token']).toBeUndefined();
    expect(sent().headers.authorization).toMatch(
      new RegExp(`^AWS4-HMAC-SHA256 Credential=${AKID}/\\d{8}/us-east-1/bedrock/aws4_request, SignedHeaders=accept;content-type;host;x-amz-content-sha256;x-amz-date, Signature=[0-9a-f]{64}$`),
    );
    expect(sent().body).toEqual({
      messages: [{ role: 'user', content: [{ text: 'Hello!' }] }],
      system: [{ text: 'You are a chatbot.' }],
      inferenceConfig: { maxTokens: 512, temperature: 0.5, stopSequences: ['END'] },
    });
    await expectSignedBy(sent(), { accessKeyId: AKID, secretAccessKey: SECRET }, 'us-east-1');
  });

  it('an inference-profile ARN is one encoded path segment, and still signs', async () => {
    const r = await chat({}, 'claude');
    expect(r.model).toBe(ARN);
    expect(sent().url).toBe(`/model/${encodeURIComponent(ARN)}/converse`);
    await expectSignedBy(sent(), { accessKeyId: AKID, secretAccessKey: SECRET }, 'us-east-1');
  });

  it('credentials from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN when the provider names none', async () => {
    await chat({}, 'envnova');
    expect(sent().headers.authorization).toContain(`Credential=${ENV.AWS_ACCESS_KEY_ID}/`);
    expect(sent().headers.authorization).toContain('/eu-west-3/bedrock/aws4_request');
    expect(sent().headers['x-amz-security-token']).toBe(ENV.AWS_SESSION_TOKEN);
    await expectSignedBy(sent(), { accessKeyId: ENV.AWS_ACCESS_KEY_ID, secretAccessKey: ENV.AWS_SECRET_ACCESS_KEY, sessionToken: ENV.AWS_SESSION_TOKEN }, 'eu-west-3');
  });

  it('streams go to /converse-stream, signed the same way', async () => {
    bedrock.setHandler(() => replay(f('converse-stream-basic')));
    await streamed();
    expect(sent().url).toBe('/model/us.amazon.nova-micro-v1%3A0/converse-stream');
    await expectSignedBy(sent(), { accessKeyId: AKID, secretAccessKey: SECRET }, 'us-east-1');
  });

  it('secrets never reach the client or the log', async () => {
    bedrock.setHandler(() => ({
      status: 403,
      headers: { 'x-amzn-errortype': 'UnrecognizedClientException:http://internal.amazon.com/coral/com.amazon.coral.service/' },
      body: { message: 'The security token included in the request is invalid.' },
    }));
    const err = await failureOf(chat({}));
    expect(err.status).toBe(502);
    expect(err.code).toBe('upstream_auth_failed');
    for (const secret of [SECRET, ENV.AWS_SECRET_ACCESS_KEY, ENV.AWS_SESSION_TOKEN]) {
      expect(JSON.stringify(err.error)).not.toContain(secret);
      expect(t.logText()).not.toContain(secret);
    }
  });
});

describe('request translation through the gateway', () => {
  it('multi-turn with tools and an error tool result: the recorded request, key for key', async () => {
    bedrock.setHandler(() => replay(f('converse-tool-result-error-followup')));
    const fixture = f('converse-tool-result-error-followup').request;
    const r = await chat({
      temperature: 0,
      max_tokens: null as never,
      messages: [
        { role: 'system', content: 'You are a helpful chatbot.' },
        { role: 'user', content: 'What is the capital of France?' },
        {
          role: 'assistant',
          content: fixture.messages[1].content[0].text,
          tool_calls: [{ id: 'tooluse_Ze_bgl9CSqu8aJv7XD-_Dw', type: 'function', function: { name: 'get_capital', arguments: '{"country": "France"}' } }],
        },
        {
          role: 'tool',
          tool_call_id: 'tooluse_Ze_bgl9CSqu8aJv7XD-_Dw',
          content: 'The country is not supported.\n\nFix the errors and try again.',
          status: 'error',
        } as OpenAI.Chat.ChatCompletionToolMessageParam,
      ],
      tools: [{ type: 'function', function: { name: 'get_capital', description: 'Get the capital of a country.', parameters: fixture.toolConfig.tools[0].toolSpec.inputSchema.json } }],
      tool_choice: 'auto',
    });
    expectValid('CreateChatCompletionResponse', r);
    expect(sent().body).toEqual({ ...fixture, inferenceConfig: { maxTokens: 512, temperature: 0 } });
    expect(r.choices[0].message.content).toContain('The capital of France is Paris.');
  });

  it('images: a data URL as bytes; an https URL is a 400 naming the part, and nothing is sent', async () => {
    bedrock.setHandler(() => replay(f('converse-image-input')));
    const bytes = f('converse-image-input').request.messages[0].content[1].image.source.bytes as string;
    const r = await chat({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this vegetable?' },
            { type: 'image_url', image_url: { url: `data:image/jpeg;base64,${bytes}` } },
          ],
        },
      ],
    });
    expect(r.choices[0].message.content).toContain('potato');
    expect(sent().body.messages).toEqual(f('converse-image-input').request.messages);
    bedrock.reset();
    const err = await failureOf(chat({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/potato.jpg' } }] }] }));
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.code).toBe('unsupported_parameter');
    expect(err.param).toBe('messages[0].content[0]');
    expect(bedrock.requests).toHaveLength(0);
  });

  it('a parameter Converse cannot honour is a 400 naming it, or dropped when the alias allows', async () => {
    const err = await failureOf(chat({ seed: 7 }));
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.code).toBe('unsupported_parameter');
    expect(err.param).toBe('seed');
    expectValid('ErrorResponse', { error: err.error });
    expect((await failureOf(chat({ response_format: { type: 'json_object' } }))).param).toBe('response_format');
    expect(bedrock.requests).toHaveLength(0);

    const r = await chat({ seed: 7, n: 2, frequency_penalty: 0.5 }, 'lenient');
    expectValid('CreateChatCompletionResponse', r);
    expect(sent().body).toEqual({ messages: [{ role: 'user', content: [{ text: 'hi' }] }], inferenceConfig: { maxTokens: 512 } });
    for (const p of ['seed', 'n', 'frequency_penalty']) expect(t.logs.some((l) => l.msg === `dropped unsupported parameter '${p}'`)).toBe(true);
  });

  it('response_format json_schema is Bedrock structured output', async () => {
    const schema = { type: 'object', properties: { capital: { type: 'string' } }, required: ['capital'], additionalProperties: false };
    await chat({ response_format: { type: 'json_schema', json_schema: { name: 'capital', strict: true, schema } } });
    expect(sent().body.outputConfig).toEqual({ textFormat: { type: 'json_schema', structure: { jsonSchema: { schema: JSON.stringify(schema), name: 'capital' } } } });
  });
});

describe('answers', () => {
  it('a tool call; the target model id names the answer', async () => {
    bedrock.setHandler(() => replay(f('converse-tool-use')));
    const r = await chat({ tools: [{ type: 'function', function: { name: 'get_capital', parameters: { type: 'object' } } }] });
    expectValid('CreateChatCompletionResponse', r);
    expect(r.model).toBe(NOVA);
    expect(r.choices[0].finish_reason).toBe('tool_calls');
    expect(r.choices[0].message.tool_calls).toEqual([{ id: 'tooluse_Ze_bgl9CSqu8aJv7XD-_Dw', type: 'function', function: { name: 'get_capital', arguments: '{"country":"France"}' } }]);
  });

  it('cache reads in usage (also in the log line)', async () => {
    bedrock.setHandler(() => replay(f('converse-usage-cache-read')));
    const { data, response } = await chat({}).withResponse();
    expectValid('CreateChatCompletionResponse', data);
    expect(data.usage).toEqual({ prompt_tokens: 1324, completion_tokens: 5, total_tokens: 1329, prompt_tokens_details: { cached_tokens: 1322 }, cost: expect.any(Number) });
    const line = await logLineFor(t, response.headers.get('x-request-id')!);
    expect(line).toMatchObject({ model: 'nova', upstreamModel: NOVA, promptTokens: 1324, totalTokens: 1329 });
  });

  it('a recorded binary stream: text, one finish, usage only when asked', async () => {
    bedrock.setHandler(() => replay(f('converse-stream-basic')));
    const plain = await streamed();
    expect(plain.text).toMatch(/^The capital of France is Paris\./);
    expect(plain.finishes).toEqual(['stop']);
    expect(plain.chunks[0].choices[0].delta.role).toBe('assistant');
    expect(plain.chunks.every((c) => c.model === NOVA)).toBe(true);
    expect(plain.chunks.some((c) => 'usage' in c)).toBe(false);

    const withUsage = await streamed({ stream_options: { include_usage: true } });
    expect(withUsage.chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 13, completion_tokens: 82, total_tokens: 95 } });
  });

  it('frames re-encoded from the decoded view, one write each, give the same stream', async () => {
    bedrock.setHandler(() => eventStream(encode(framesOf('converse-stream-basic')), { gapMs: 1 }));
    const { text, finishes } = await streamed();
    expect(text).toMatch(/^The capital of France is Paris\..*"The City of Love\."$/);
    expect(finishes).toEqual(['stop']);
  });

  it('a streamed tool call: the SDK assembles the call from id, name and input fragments', async () => {
    bedrock.setHandler(() => replay(f('converse-stream-tool-use')));
    const runner = t.client().chat.completions.stream({
      model: 'nova',
      messages: [{ role: 'user', content: 'What is the temperature of the capital of France?' }],
      tools: [{ type: 'function', function: { name: 'get_temperature', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }],
    });
    runner.on('chunk', (chunk) => expectValid('CreateChatCompletionStreamResponse', chunk));
    const final = await runner.finalChatCompletion();
    expect(final.choices[0].finish_reason).toBe('tool_calls');
    expect(final.choices[0].message.tool_calls).toEqual([{ id: 'tooluse_lAG_zP8QRHmSYOwZzzaCqA', type: 'function', function: { name: 'get_temperature', arguments: '{"city":"Paris"}' } }]);
  });

  it('Claude reasoning streams as reasoning_content, text as content', async () => {
    bedrock.setHandler(() => replay(f('converse-stream-reasoning-claude')));
    const { chunks, text } = await streamed({ thinking: { type: 'enabled', budget_tokens: 1024 } } as never, 'claude');
    expect(sent().body.additionalModelRequestFields).toEqual({ thinking: { type: 'enabled', budget_tokens: 1024 } });
    const reasoning = chunks.map((c) => (c.choices[0]?.delta as { reasoning_content?: string } | undefined)?.reasoning_content ?? '').join('');
    expect(reasoning).toContain('straightforward greeting');
    expect(text).toBe("Hello! It's nice to meet you. How can I help you today?");
  });
});

describe('errors', () => {
  const basic = () => encode(framesOf('converse-stream-basic'));

  it('an exception frame after the first chunk is an in-stream error, then [DONE]', async () => {
    bedrock.setHandler(() => eventStream([...basic().slice(0, 3), Buffer.from(f('stream-exception-frame').body)], { gapMs: 1 }));
    const res = await post();
    expect(res.status).toBe(200);
    const events = await readSseEvents(res);
    expect(JSON.parse(events[0].slice(6)).choices[0].delta).toEqual({ role: 'assistant', content: 'The' });
    const error = JSON.parse(events.at(-2)!.slice(6));
    expectValid('ErrorResponse', error);
    expect(error.error).toMatchObject({ code: 'upstream_error', message: 'aws: Model Stream Error (aws code: modelStreamErrorException) (HTTP 500)' });
    expect(events.at(-1)).toBe('data: [DONE]');
    const line = await logLineFor(t, res.headers.get('x-request-id')!);
    expect(line).toMatchObject({ streamError: true, error: 'upstream_error' });
  });

  it('an exception before any content is a proper HTTP error: throttling → 429, model stream error → 502', async () => {
    bedrock.setHandler(() => eventStream([basic()[0], ...encode([exception('throttlingException', 'Too many tokens, please wait before trying again.')])]));
    const res = await post();
    expect(res.status).toBe(429);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expectValid('ErrorResponse', body);
    expect(body.error).toMatchObject({ code: 'rate_limit_exceeded', message: 'aws: Too many tokens, please wait before trying again. (aws code: throttlingException)' });

    bedrock.setHandler(() => replay(f('stream-exception-frame')));
    const failed = await post();
    expect(failed.status).toBe(502);
    expect(((await failed.json()) as { error: { code: string } }).error.code).toBe('upstream_error');
  });

  it('so a throttled stream is retried before the client sees a byte', async () => {
    bedrock.setHandler((_req, i) => (i === 0 ? eventStream([basic()[0], ...encode([exception('throttlingException', 'slow down')])]) : replay(f('converse-stream-basic'))));
    const { text, finishes } = await streamed({}, 'patient');
    expect(text).toMatch(/^The capital of France is Paris\./);
    expect(finishes).toEqual(['stop']);
    expect(bedrock.requests).toHaveLength(2);
  });

  it('a body cut inside a frame is an in-stream upstream_error, then [DONE]', async () => {
    const frames = basic();
    const cut = frames[4].subarray(0, 20);
    bedrock.setHandler(() => eventStream([...frames.slice(0, 4), cut], { gapMs: 5 }));
    const events = await readSseEvents(await post());
    expect(events.slice(0, -2).map((e) => JSON.parse(e.slice(6)).choices[0].delta.content)).toEqual(['The', ' capital of France is Paris.', ' Paris is not']);
    const error = JSON.parse(events.at(-2)!.slice(6));
    expectValid('ErrorResponse', error);
    expect(error.error.code).toBe('upstream_error');
    expect(error.error.message).toContain('ended inside a frame');
    expect(events.at(-1)).toBe('data: [DONE]');
  });

  it('a stream that ends cleanly without messageStop ended early', async () => {
    bedrock.setHandler(() => eventStream(basic().slice(0, 6)));
    const events = await readSseEvents(await post());
    const error = JSON.parse(events.at(-2)!.slice(6));
    expect(error.error.code).toBe('upstream_error');
    expect(error.error.message).toContain('the stream ended early (no messageStop)');
    expect(events.at(-1)).toBe('data: [DONE]');
  });

  it('a connection cut mid-stream is an in-stream error; before the first chunk a 502', async () => {
    bedrock.setHandler(() => eventStream(basic(), { destroyAfterChunks: 4, gapMs: 20 }));
    const events = await readSseEvents(await post());
    expect(JSON.parse(events.at(-2)!.slice(6)).error.code).toBe('upstream_error');
    expect(events.at(-1)).toBe('data: [DONE]');

    bedrock.setHandler(() => eventStream(basic(), { destroyAfterChunks: 1, gapMs: 10 }));
    const res = await post();
    expect(res.status).toBe(502);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('upstream_error');
    expect(body.error.message).toMatch(/^aws: /);
  });

  it('a 200 that is not an event stream is the provider’s fault: 502', async () => {
    bedrock.setHandler(() => ({ status: 200, headers: { 'content-type': 'text/html' }, chunks: ['<html><body>Bad gateway</body></html>'] }));
    const res = await post();
    expect(res.status).toBe(502);
    expect(((await res.json()) as { error: { message: string } }).error.message).toContain('malformed');
    bedrock.setHandler(() => ({ status: 200, body: '{"output": {}}' }));
    const shape = await failureOf(chat({}));
    expect(shape.status).toBe(502);
    expect(shape.code).toBe('upstream_error');
  });

  it('ValidationException → 400 with Bedrock’s words and the exception name', async () => {
    bedrock.setHandler(() => replay(f('error-400-validation-exception')));
    const err = await failureOf(chat({}));
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.code).toBe('upstream_bad_request');
    expect(err.message).toContain('aws: The content field in the Message object at messages.1 is empty. Add a ContentBlock object to the content field and try again. (aws code: ValidationException)');
  });

  it('an unknown model id is the operator’s problem: 502 upstream_model_not_found', async () => {
    bedrock.setHandler(() => replay(f('error-400-invalid-model-id')));
    const err = await failureOf(chat({}));
    expect(err.status).toBe(502);
    expect(err.code).toBe('upstream_model_not_found');
    expect(err.message).toContain('aws: The provided model identifier is invalid.');
  });

  it('the recorded throttling is retried, then answered 429', async () => {
    bedrock.setHandler(() => replay(f('error-429-throttling')));
    const err = await failureOf(chat({}, 'patient'));
    expect(bedrock.requests).toHaveLength(3);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect(err.message).toContain('aws: Rate exceeded (aws code: ThrottlingException)');
  });

  it('AccessDenied → 502 upstream_auth_failed, not retried', async () => {
    bedrock.setHandler(() => ({
      status: 403,
      headers: { 'x-amzn-errortype': 'AccessDeniedException:http://internal.amazon.com/coral/com.amazon.bedrock/' },
      body: { message: "You don't have access to the model with the specified model ID." },
    }));
    const err = await failureOf(chat({}, 'patient'));
    expect(err.status).toBe(502);
    expect(err.code).toBe('upstream_auth_failed');
    expect(bedrock.requests).toHaveLength(1);
  });
});

describe('without credentials', () => {
  const upstream = fakeUpstream(() => replay(f('converse-basic-system')));
  const gw = useTestGateway(
    () =>
      configYaml({
        providers: `  nokeys: { plugin: bedrock, region: us-east-1, endpoint: "${upstream.url}" }\n  mock: { plugin: mock }`,
        models:
          '  nova: { targets: [{ provider: nokeys, model: us.amazon.nova-micro-v1:0 }] }\n  safe: { targets: [{ provider: nokeys, model: us.amazon.nova-micro-v1:0 }, { provider: mock, model: mock-1 }] }',
      }),
    { upstreams: [upstream], processEnv: Object.fromEntries(Object.keys(ENV).map((k) => [k, undefined])) },
  );

  it('the gateway starts, warns, reports the provider unavailable with the reason, and fallbacks serve', async () => {
    expect(gw.logs.some((l) => l.level === 40 && String(l.msg).includes('no AWS credentials'))).toBe(true);
    const ready = (await (await fetch(`${gw.url}/readyz`)).json()) as { providers: Record<string, { status: string; reason?: string }> };
    expect(ready.providers.nokeys).toEqual({ status: 'unavailable', reason: expect.stringContaining('no AWS credentials') });
    const err = await failureOf(gw.client().chat.completions.create({ model: 'nova', messages: [{ role: 'user', content: 'hi' }] }));
    expect(err.status).toBe(503);
    expect(err.code).toBe('provider_unavailable');
    const r = await gw.client().chat.completions.create({ model: 'safe', messages: [{ role: 'user', content: 'hi' }] });
    expect(r.model).toBe('mock-1');
    expect(upstream.requests).toHaveLength(0);
  });
});
