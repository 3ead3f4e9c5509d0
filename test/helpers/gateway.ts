/** Starts the real gateway on a loopback port from a YAML text, with its log lines captured. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import OpenAI from 'openai';
import { Gateway, type GatewayOptions } from '../../src/gateway.ts';

export interface TestGateway {
  gateway: Gateway;
  /** http://127.0.0.1:port */
  url: string;
  /** url + /v1 */
  baseURL: string;
  configFile: string;
  dir: string;
  /** Parsed JSON log lines. */
  logs: Array<Record<string, any>>;
  /** Raw log text, for leak checks. */
  logText(): string;
  client(apiKey?: string, options?: Partial<ConstructorParameters<typeof OpenAI>[0]>): OpenAI;
  close(): Promise<void>;
}

export const DEV_KEY = 'sk-test-dev-0123456789';

/** `yaml` is the config text, or `{ file }` to serve an existing config file. */
export async function startTestGateway(yaml: string | { file: string }, options: Partial<GatewayOptions> & { files?: Record<string, string> } = {}): Promise<TestGateway> {
  const dir = typeof yaml === 'string' ? mkdtempSync(path.join(tmpdir(), 'switchyard-test-')) : path.dirname(yaml.file);
  const configFile = typeof yaml === 'string' ? path.join(dir, 'gateway.yaml') : yaml.file;
  if (typeof yaml === 'string') writeFileSync(configFile, yaml);
  for (const [name, text] of Object.entries(options.files ?? {})) writeFileSync(path.join(dir, name), text);
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
  const gateway = await Gateway.start({ config: configFile, port: 0, host: '127.0.0.1', logger, env: {}, ...options });
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

/** Waits until a request log line with this request id has been written (it follows the response). */
export async function logLineFor(t: TestGateway, reqId: string, timeoutMs = 2000): Promise<Record<string, any>> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const line = t.logs.find((l) => l.reqId === reqId && (l.msg === 'request' || l.msg === 'request failed'));
    if (line) return line;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`no log line for ${reqId}`);
}

/** A gateway.yaml for tests: one dev key, the given providers and models. */
export function configYaml(parts: { providers: string; models: string; keys?: string; pipeline?: string; extra?: string }): string {
  return [
    'keys:',
    parts.keys ?? `  - { name: dev, key: ${DEV_KEY}, models: ["*"] }`,
    'providers:',
    parts.providers,
    'models:',
    parts.models,
    parts.pipeline ? `pipeline: ${parts.pipeline}` : '',
    parts.extra ?? '',
  ].join('\n');
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
