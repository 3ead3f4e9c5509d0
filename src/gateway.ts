/**
 * A running gateway: the current config generation plus the HTTP server in front of it.
 * Embeddable (tests and the CLI both use startGateway).
 */
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
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
  /** Connections that have not sent a request yet: Node's close() does not count them idle. */
  readonly #fresh = new Set<Socket>();

  private constructor(runtime: Runtime, log: Logger) {
    this.#runtime = runtime;
    this.log = log;
    this.app = buildApp({ getRuntime: () => this.#runtime, log, bodyLimit: runtime.bodyLimit });
    const fresh = this.#fresh;
    this.app.server.on('connection', (socket: Socket) => {
      fresh.add(socket);
      socket.once('close', () => fresh.delete(socket));
    });
    this.app.server.on('request', (req: IncomingMessage) => fresh.delete(req.socket));
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

  /**
   * Graceful shutdown: stop accepting, let in-flight requests (streams included) finish, close
   * keep-alive connections as they fall idle, and cut whatever is left after `graceMs`.
   */
  async close(graceMs = 30_000): Promise<void> {
    const server = this.app.server;
    // Node closes idle connections once, when close() starts; one busy then would otherwise
    // linger for the keep-alive timeout after its request ends.
    const reaper = setInterval(() => {
      server.closeIdleConnections();
      for (const socket of this.#fresh) socket.destroy();
    }, 50);
    const deadline = setTimeout(() => server.closeAllConnections(), graceMs);
    try {
      await this.app.close();
    } finally {
      clearInterval(reaper);
      clearTimeout(deadline);
    }
    await this.#runtime.close();
  }
}

