/**
 * A real redis-server for a test file: a free loopback port, no persistence, stopped and
 * started again on the same port to play an outage. When redis-server is not installed the
 * tests fail and say so; they never skip.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { once } from 'node:events';
import { connect, createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

export interface RedisServer {
  readonly port: number;
  readonly url: string;
  /** Kills the server (SIGKILL by default: an outage, not a shutdown). */
  stop(signal?: NodeJS.Signals): Promise<void>;
  /** Starts it again on the same port, empty. */
  start(): Promise<void>;
}

const NOT_INSTALLED =
  'redis-server is not on PATH: the governance tests need a real Redis. Install it (Debian/Ubuntu: apt-get install redis-server; macOS: brew install redis) and run the tests again.';

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  if (!address || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** True once the server answers PING with +PONG. */
function pings(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => done(data.toString().startsWith('+PONG')));
  });
}

async function launch(port: number): Promise<ChildProcess> {
  // Its own folder: a test that turns persistence on writes there, never into the working directory.
  const dir = mkdtempSync(path.join(tmpdir(), 'switchyard-redis-'));
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no', '--dir', dir], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const failed = new Promise<never>((_, reject) => {
    child.once('error', (err: NodeJS.ErrnoException) => reject(err.code === 'ENOENT' ? new Error(NOT_INSTALLED) : err));
    child.once('exit', (code) => reject(new Error(`redis-server exited with ${code} before answering PING: ${stderr.trim()}`)));
  });
  failed.catch(() => undefined);
  const ready = (async () => {
    for (const deadline = Date.now() + 10_000; Date.now() < deadline; await sleep(20)) if (await pings(port)) return;
    throw new Error(`redis-server on port ${port} did not answer PING within 10 s`);
  })();
  await Promise.race([ready, failed]);
  return child;
}

export async function startRedisServer(): Promise<RedisServer> {
  const port = await freePort();
  let child: ChildProcess | undefined = await launch(port);
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    async stop(signal = 'SIGKILL') {
      const running = child;
      child = undefined;
      if (!running || running.exitCode !== null) return;
      const exited = once(running, 'exit');
      running.kill(signal);
      await exited;
    },
    async start() {
      if (child) return;
      child = await launch(port);
    },
  };
}
