/**
 * The conformance battery every provider joins, built-in or not, by declaring what it can do and
 * how its fake upstream answers. It drives the real gateway with the official openai SDK and
 * checks that the client cannot tell which provider served it (except by `model`).
 *
 * @example
 * runConformance({
 *   name: 'acme',
 *   plugin,                                   // its declared capabilities decide what runs
 *   provider: (url) => ({ plugin: fileURLToPath(new URL('./index.ts', import.meta.url)), baseUrl: url, apiKey: CONFORMANCE_SECRET }),
 *   model: 'acme-1',
 *   scenarios: { text: { respond: () => replay(loadFixture(FIXTURES, 'chat')) }, textStream: { ... }, errors: { 400: () => ..., 401: () => ..., 429: () => ..., 500: () => ... } },
 * });
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeUpstream, type FakeUpstream, type RecordedRequest, type ScriptedResponse } from './fake-upstream.ts';
import { DEV_KEY, startTestGateway, type TestGateway } from './gateway.ts';
import { expectValid } from './schema.ts';
import { HINTS } from '../../providers/capabilities.ts';
import type { ProviderPlugin } from '../../index.ts';

/** Plausible values for parameters a provider may declare unsupported (they must pass validation first). */
const SAMPLE_VALUES: Record<string, unknown> = {
  seed: 7,
  audio: { voice: 'alloy', format: 'mp3' },
  prediction: { type: 'content', content: 'x' },
  web_search_options: {},
  functions: [{ name: 'f', parameters: { type: 'object', properties: {} } }],
  function_call: 'auto',
  verbosity: 'low',
  reasoning_effort: 'low',
  logit_bias: { '50256': -100 },
  presence_penalty: 0.5,
  frequency_penalty: 0.5,
  n: 2,
  logprobs: true,
};

/** What the fake upstream answers in one battery case, and what the answer must then show. */
export interface Scenario {
  respond: (req: RecordedRequest) => ScriptedResponse;
  /** Text the answer must contain (plain and streamed text scenarios). */
  text?: string;
  /** The tool the answer must call (tool scenarios). */
  toolName?: string;
}

export interface ProviderConformance {
  /** The provider's name in the test config (error messages start with `<name>: `). */
  name: string;
  /** The plugin under test: the battery reads its declared `capabilities` (what it runs, what must be refused). */
  plugin: Pick<ProviderPlugin, 'capabilities'>;
  /**
   * The providers.<name> entry pointing at the fake upstream (`url`), with CONFORMANCE_SECRET as
   * its credential (no error may repeat it); a plugin given by path, absolute.
   */
  provider: (upstreamUrl: string) => Record<string, unknown>;
  /** The target model id. */
  model: string;
  /** The model the upstream reports (response `model`); defaults to `model`. */
  reportedModel?: string;
  scenarios: {
    text: Scenario;
    textStream?: Scenario;
    toolCall?: Scenario;
    toolCallStream?: Scenario;
    /** Native error answers by upstream status: 400, 401, 429, 500 at least. */
    errors: Partial<Record<400 | 401 | 403 | 404 | 429 | 500 | 503 | 529, () => ScriptedResponse>>;
  };
  /** Recorded scenarios come from different upstream models: do not require one reported model in streams. */
  modelPerScenario?: boolean;
  /** The gateway.yaml `pipeline` around the provider (default: the built-in one): a stage under test joins the battery here. */
  pipeline?: ReadonlyArray<string | { stage: string; options?: Record<string, unknown> }>;
  /** Battery cases this provider cannot run, with the reason (shown as skipped). */
  skip?: Partial<Record<'stream' | 'streamUsage' | 'tools' | 'toolsStream', string>>;
}

/** The upstream credential a provider under test is given; the battery checks no error repeats it. */
export const CONFORMANCE_SECRET = 'test-upstream-secret';

const TOOL = {
  type: 'function' as const,
  function: { name: 'get_weather', description: 'Weather for a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
};

export function runConformance(spec: ProviderConformance): void {
  describe(`conformance: ${spec.name}`, () => {
    let upstream: FakeUpstream;
    let t: TestGateway;
    let current: Scenario['respond'] = () => ({ status: 500, body: { error: 'no scenario' } });
    const reported = spec.reportedModel ?? spec.model;

    beforeAll(async () => {
      upstream = await startFakeUpstream((req) => current(req));
      const config = {
        keys: [{ name: 'dev', key: DEV_KEY, models: ['*'] }],
        providers: { [spec.name]: spec.provider(upstream.url) },
        models: { alias: { retry: { attempts: 1 }, targets: [{ provider: spec.name, model: spec.model }] } },
        ...(spec.pipeline ? { pipeline: spec.pipeline } : {}),
      };
      t = await startTestGateway(config);
    });
    afterAll(async () => {
      await t?.close();
      await upstream?.close();
    });

    const client = () => t.client(DEV_KEY);
    const caps = spec.plugin.capabilities ?? {};
    const use = (s: Scenario | undefined) => {
      if (!s) throw new Error('scenario missing');
      current = s.respond;
    };

    it('plain completion: valid, names the upstream model, reports usage', async () => {
      use(spec.scenarios.text);
      const r = await client().chat.completions.create({ model: 'alias', messages: [{ role: 'user', content: 'Hello' }] });
      expectValid('CreateChatCompletionResponse', r);
      expect(r.model).toBe(reported);
      expect(r.model).not.toBe('alias');
      if (spec.scenarios.text.text) expect(r.choices[0].message.content).toContain(spec.scenarios.text.text);
      expect(r.choices[0].finish_reason).toBe('stop');
      expect(r.usage!.total_tokens).toBe(r.usage!.prompt_tokens + r.usage!.completion_tokens);
      expect(r.usage!.prompt_tokens).toBeGreaterThan(0);
    });

    const streamSkip = caps.streaming === false ? 'provider does not stream' : spec.skip?.stream;
    it.skipIf(Boolean(streamSkip))(`stream: every chunk valid, text arrives, one finish${streamSkip ? ` (skipped: ${streamSkip})` : ''}`, async () => {
      use(spec.scenarios.textStream);
      const stream = await client().chat.completions.create({ model: 'alias', stream: true, messages: [{ role: 'user', content: 'Hello' }] });
      let text = '';
      const finishes: string[] = [];
      for await (const chunk of stream) {
        expectValid('CreateChatCompletionStreamResponse', chunk);
        if (!spec.modelPerScenario) expect(chunk.model).toBe(reported);
        expect(chunk.model).not.toBe('alias');
        expect('usage' in chunk && chunk.usage).toBeFalsy();
        for (const c of chunk.choices) {
          text += c.delta.content ?? '';
          if (c.finish_reason) finishes.push(c.finish_reason);
        }
      }
      if (spec.scenarios.textStream?.text) expect(text).toContain(spec.scenarios.textStream.text);
      expect(finishes).toEqual(['stop']);
    });

    const usageSkip = streamSkip ?? (caps.streamUsage === false ? 'provider reports no usage in streams' : spec.skip?.streamUsage);
    it.skipIf(Boolean(usageSkip))(`stream with include_usage: a final usage-only chunk${usageSkip ? ` (skipped: ${usageSkip})` : ''}`, async () => {
      use(spec.scenarios.textStream);
      const stream = await client().chat.completions.create({ model: 'alias', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'Hello' }] });
      const chunks = [];
      for await (const chunk of stream) {
        expectValid('CreateChatCompletionStreamResponse', chunk);
        chunks.push(chunk);
      }
      const last = chunks.at(-1)!;
      expect(last.choices).toEqual([]);
      expect(last.usage!.prompt_tokens).toBeGreaterThan(0);
      expect(last.usage!.total_tokens).toBe(last.usage!.prompt_tokens + last.usage!.completion_tokens);
    });

    const toolSkip = caps.tools === false ? 'provider has no tools' : spec.skip?.tools;
    it.skipIf(Boolean(toolSkip))(`tool call: finish_reason tool_calls with parsable arguments${toolSkip ? ` (skipped: ${toolSkip})` : ''}`, async () => {
      use(spec.scenarios.toolCall);
      const r = await client().chat.completions.create({ model: 'alias', messages: [{ role: 'user', content: 'Weather in Paris?' }], tools: [TOOL], tool_choice: 'auto' });
      expectValid('CreateChatCompletionResponse', r);
      expect(r.choices[0].finish_reason).toBe('tool_calls');
      const call = r.choices[0].message.tool_calls![0] as { id: string; function: { name: string; arguments: string } };
      expect(call.id).toBeTruthy();
      if (spec.scenarios.toolCall?.toolName) expect(call.function.name).toBe(spec.scenarios.toolCall.toolName);
      expect(() => JSON.parse(call.function.arguments)).not.toThrow();
    });

    const toolStreamSkip = toolSkip ?? streamSkip ?? spec.skip?.toolsStream;
    it.skipIf(Boolean(toolStreamSkip))(`streamed tool call: the SDK assembles a complete call${toolStreamSkip ? ` (skipped: ${toolStreamSkip})` : ''}`, async () => {
      use(spec.scenarios.toolCallStream);
      const runner = client().chat.completions.stream({ model: 'alias', messages: [{ role: 'user', content: 'Weather in Paris?' }], tools: [TOOL] });
      runner.on('chunk', (chunk) => expectValid('CreateChatCompletionStreamResponse', chunk));
      const final = await runner.finalChatCompletion();
      expect(final.choices[0].finish_reason).toBe('tool_calls');
      const call = final.choices[0].message.tool_calls![0] as { id: string; function: { name: string; arguments: string } };
      expect(call.id).toBeTruthy();
      if (spec.scenarios.toolCallStream?.toolName) expect(call.function.name).toBe(spec.scenarios.toolCallStream.toolName);
      expect(() => JSON.parse(call.function.arguments)).not.toThrow();
    });

    // A hint the model cannot take (how long to think, how wordy to be) is dropped and reported, never refused.
    const hints = [...new Set([...(caps.reasoning === false ? ['reasoning_effort'] : []), ...(caps.unsupportedParams ?? []).filter((p) => HINTS.has(p))])];
    for (const param of hints) {
      it(`declared unsupported hint: ${param} is dropped and reported, the rest served`, async () => {
        use(spec.scenarios.text);
        const body: OpenAI.ChatCompletionCreateParamsNonStreaming = Object.assign({ model: 'alias', messages: [{ role: 'user' as const, content: 'Hello' }] }, { [param]: SAMPLE_VALUES[param] });
        const { data, response } = await client().chat.completions.create(body).withResponse();
        expect(data.choices[0].finish_reason).toBe('stop');
        expect(response.headers.get('x-switchyard-dropped')).toBe(`${param} (${String(SAMPLE_VALUES[param])})`);
        expect(upstream.requests.at(-1)!.body).not.toHaveProperty(param);
      });
    }

    // What the plugin declares it cannot honour is refused before anything reaches the upstream.
    const refused = [...(caps.unsupportedParams ?? []), ...(caps.samplingExtras === false ? ['n', 'logprobs'] : [])].filter((p) => p in SAMPLE_VALUES && !HINTS.has(p));
    for (const param of refused) {
      it(`declared unsupported: ${param} → 400 unsupported_parameter, upstream not called`, async () => {
        const calls = upstream.requests.length;
        // The parameter is one the SDK types (or a newer one it passes through): added by name.
        const body: OpenAI.ChatCompletionCreateParamsNonStreaming = Object.assign({ model: 'alias', messages: [{ role: 'user' as const, content: 'Hello' }] }, { [param]: SAMPLE_VALUES[param] });
        const err = await client()
          .chat.completions.create(body)
          .then(
            () => undefined,
            (e: unknown) => e as InstanceType<typeof OpenAI.APIError>,
          );
        expect(err).toBeInstanceOf(OpenAI.BadRequestError);
        expect(err!.code).toBe('unsupported_parameter');
        expect(err!.param).toBe(param);
        expect(upstream.requests.length).toBe(calls);
      });
    }

    const expectations: Array<[number, abstract new (...args: never[]) => unknown, number, string]> = [
      [400, OpenAI.BadRequestError, 400, 'upstream_bad_request'],
      [401, OpenAI.InternalServerError, 502, 'upstream_auth_failed'],
      [403, OpenAI.InternalServerError, 502, 'upstream_auth_failed'],
      [404, OpenAI.InternalServerError, 502, 'upstream_model_not_found'],
      [429, OpenAI.RateLimitError, 429, 'rate_limit_exceeded'],
      [500, OpenAI.InternalServerError, 502, 'upstream_error'],
      [503, OpenAI.InternalServerError, 503, 'provider_unavailable'],
      [529, OpenAI.InternalServerError, 503, 'provider_unavailable'],
    ];
    for (const [status, cls, clientStatus, code] of expectations) {
      const respond = spec.scenarios.errors[status as 400];
      if (!respond) continue;
      it(`upstream ${status} → ${clientStatus} ${code}, provider-prefixed, no secrets`, async () => {
        current = () => respond();
        const err = await client()
          .chat.completions.create({ model: 'alias', messages: [{ role: 'user', content: 'Hello' }] })
          .then(
            () => undefined,
            (e: unknown) => e as InstanceType<typeof OpenAI.APIError>,
          );
        expect(err).toBeInstanceOf(cls);
        expect(err!.status).toBe(clientStatus);
        expect(err!.code).toBe(code);
        expectValid('ErrorResponse', { error: err!.error });
        if (code !== 'upstream_auth_failed') expect(err!.message).toContain(`${spec.name}:`);
        expect(err!.message).not.toContain(CONFORMANCE_SECRET);
        if (status === 429 && respond().headers?.['retry-after']) expect(err!.headers?.get('retry-after')).toBeTruthy();
      });
    }
  });
}
