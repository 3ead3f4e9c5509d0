/** The real gateway on a loopback port, from a config object or YAML text, with its log lines captured. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import OpenAI from 'openai';
import pino from 'pino';
import { afterAll, afterEach, beforeAll } from 'vitest';
import YAML from 'yaml';
import { Gateway, type GatewayOptions } from '../../index.ts';
import type { FakeUpstream } from './fake-upstream.ts';

/** The client key a test config gets when it names no `keys`; `client()` uses it by default. */
export const DEV_KEY = 'sk-test-dev-0123456789';

/**
 * What a test gateway serves: a gateway.yaml as an object (`keys` defaults to one key, DEV_KEY,
 * for every model) or as YAML text, or `{ file }`, an existing gateway.yaml served from its own
 * folder. Plugins named by path resolve from the config's folder (a temporary one for objects
 * and text), so give them as absolute paths.
 */
export type TestConfig = string | { file: string } | Record<string, unknown>;

export interface TestGatewayOptions extends Partial<GatewayOptions> {
  /** Extra files written beside the config (name → content), e.g. a plugin the config loads by `./name`. */
  files?: Record<string, string>;
}

export interface TestGateway {
  gateway: Gateway;
  /** http://127.0.0.1:port */
  url: string;
  /** url + /v1 */
  baseURL: string;
  configFile: string;
  dir: string;
  /** Parsed JSON log lines (level debug). */
  // biome-ignore lint/suspicious/noExplicitAny: log lines are free-form JSON, read by tests as they find them
  logs: Array<Record<string, any>>;
  /** Raw log text, for leak checks. */
  logText(): string;
  /** The official SDK pointed at the gateway, without SDK retries. */
  client(apiKey?: string, options?: Partial<ConstructorParameters<typeof OpenAI>[0]>): OpenAI;
  close(): Promise<void>;
}

/** Starts the gateway on 127.0.0.1 (a free port), logging at debug level into `logs`. */
export async function startTestGateway(config: TestConfig, options: TestGatewayOptions = {}): Promise<TestGateway> {
  const { files = {}, ...gatewayOptions } = options;
  const existing = typeof config === 'object' && typeof config.file === 'string' ? config.file : undefined;
  const dir = existing ? path.dirname(existing) : mkdtempSync(path.join(tmpdir(), 'switchyard-test-'));
  const configFile = existing ?? path.join(dir, 'gateway.yaml');
  if (!existing) writeFileSync(configFile, typeof config === 'string' ? config : YAML.stringify({ keys: [{ name: 'dev', key: DEV_KEY, models: ['*'] }], ...config }));
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
  // biome-ignore lint/suspicious/noExplicitAny: log lines are free-form JSON
  const logs: Array<Record<string, any>> = [];
  let raw = '';
  const sink = new Writable({
    write(chunk, _enc, done) {
      const text = chunk.toString();
      raw += text;
      for (const line of text.split('\n')) if (line.trim()) logs.push(JSON.parse(line));
      done();
    },
  });
  const logger = pino({ level: 'debug' }, sink);
  const gateway = await Gateway.start({ config: configFile, port: 0, host: '127.0.0.1', logger, env: {}, ...gatewayOptions });
  return {
    gateway,
    url: gateway.url,
    baseURL: `${gateway.url}/v1`,
    configFile,
    dir,
    logs,
    logText: () => raw,
    client: (apiKey = DEV_KEY, extra = {}) => new OpenAI({ apiKey, baseURL: `${gateway.url}/v1`, maxRetries: 0, ...extra }),
    close: () => gateway.close(),
  };
}

export interface UseTestGatewayOptions extends TestGatewayOptions {
  /** Started before the gateway (so `config()` can read their URLs), restored after each test, closed after all. */
  upstreams?: FakeUpstream[];
  /**
   * process.env entries in force while the gateway starts, for plugins that read the environment
   * when created (AWS credentials, say); `undefined` unsets one. Restored once it has started.
   */
  processEnv?: Record<string, string | undefined>;
}

/**
 * One gateway for the tests of a file or `describe` block: started in `beforeAll` from
 * `config()` (called then, when the upstream URLs are known), closed in `afterAll`; after each
 * test every upstream is back to its first handler with its requests forgotten. The returned
 * object stands for the running gateway inside tests and hooks.
 *
 * @example
 * const upstream = fakeUpstream(() => replay(loadFixture(FIXTURES, 'chat-basic')));
 * const t = useTestGateway(() => ({
 *   providers: { acme: { plugin: fileURLToPath(new URL('./index.ts', import.meta.url)), baseUrl: upstream.url } },
 *   models: { acme: { targets: [{ provider: 'acme', model: 'acme-1' }] } },
 * }), { upstreams: [upstream] });
 *
 * it('answers', async () => {
 *   const r = await t.client().chat.completions.create({ model: 'acme', messages: [{ role: 'user', content: 'hi' }] });
 *   expectValid('CreateChatCompletionResponse', r);
 * });
 */
export function useTestGateway(config: () => TestConfig, options: UseTestGatewayOptions = {}): TestGateway {
  const { upstreams = [], processEnv = {}, ...startOptions } = options;
  let started: TestGateway | undefined;
  const running = (): TestGateway => {
    if (!started) throw new Error('the test gateway starts in beforeAll: use it inside tests and hooks');
    return started;
  };

  beforeAll(async () => {
    for (const upstream of upstreams) await upstream.start();
    const saved = Object.fromEntries(Object.keys(processEnv).map((k) => [k, process.env[k]]));
    setEnv(processEnv);
    try {
      started = await startTestGateway(config(), startOptions);
    } finally {
      setEnv(saved);
    }
  });
  afterEach(() => {
    for (const upstream of upstreams) upstream.restore();
  });
  afterAll(async () => {
    await started?.close();
    for (const upstream of upstreams) await upstream.close();
  });

  return {
    get gateway() {
      return running().gateway;
    },
    get url() {
      return running().url;
    },
    get baseURL() {
      return running().baseURL;
    },
    get configFile() {
      return running().configFile;
    },
    get dir() {
      return running().dir;
    },
    get logs() {
      return running().logs;
    },
    logText: () => running().logText(),
    client: (apiKey, extra) => running().client(apiKey, extra),
    close: () => running().close(),
  };
}

function setEnv(values: Record<string, string | undefined>): void {
  for (const [k, v] of Object.entries(values)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
}

/** Waits until the request log line for this request id is written (it follows the response). */
// biome-ignore lint/suspicious/noExplicitAny: a log line, read by tests as they find it
export async function logLineFor(t: TestGateway, reqId: string, timeoutMs = 2000): Promise<Record<string, any>> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const line = t.logs.find((l) => l.reqId === reqId && (l.msg === 'request' || l.msg === 'request failed'));
    if (line) return line;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`no log line for ${reqId}`);
}

/** The SDK error a call must fail with (fails the test if the call succeeds). */
export async function failureOf(call: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  return call.then(
    () => {
      throw new Error('the call succeeded but a failure was expected');
    },
    (err: unknown) => err as InstanceType<typeof OpenAI.APIError>,
  );
}
