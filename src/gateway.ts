/**
 * A running gateway: the current config generation plus the HTTP server in front of it.
 * Embeddable (tests and the CLI both use startGateway).
 */
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { buildApp } from './server/app.ts';
import { buildRuntime, type Runtime } from './runtime/build.ts';
import { parseConfigFile } from './config/load.ts';
import { createLogger } from './logger.ts';
import type { Clock } from './runtime/clock.ts';

export interface GatewayOptions {
  /** Path to gateway.yaml. */
  config: string;
  /** Override server.port / server.host from the file (0 = any free port). */
  port?: number;
  host?: string;
  env?: NodeJS.ProcessEnv;
  /** Defaults to a logger built from the file's `log:` section. */
  logger?: Logger;
  clock?: Clock;
}

export class Gateway {
  readonly app: FastifyInstance;
  readonly log: Logger;
  /** http://host:port — clients use `${url}/v1` as their base URL. */
  url = '';
  #runtime: Runtime;

  private constructor(runtime: Runtime, log: Logger) {
    this.#runtime = runtime;
    this.log = log;
    this.app = buildApp({ getRuntime: () => this.#runtime, log, bodyLimit: runtime.bodyLimit });
  }

  /** The config generation serving new requests. */
  get runtime(): Runtime {
    return this.#runtime;
  }

  static async start(options: GatewayOptions): Promise<Gateway> {
    const parsed = await parseConfigFile(options.config, options.env);
    const log = options.logger ?? createLogger(parsed.config?.log ?? { level: 'info', format: 'auto' });
    const runtime = await buildRuntime(parsed, { generation: 1, log, env: options.env, clock: options.clock });
    const gateway = new Gateway(runtime, log);
    for (const w of runtime.warnings) log.warn({ file: w.file, line: w.line, col: w.col, path: w.path }, `config warning: ${w.message}`);
    const host = options.host ?? runtime.config.server.host;
    const port = options.port ?? runtime.config.server.port;
    await gateway.app.listen({ host, port });
    const address = gateway.app.server.address();
    const actualPort = typeof address === 'object' && address ? address.port : port;
    const shownHost = host.includes(':') ? `[${host}]` : host;
    gateway.url = `http://${shownHost}:${actualPort}`;
    return gateway;
  }

  async close(): Promise<void> {
    await this.app.close();
    await this.#runtime.close();
  }
}

