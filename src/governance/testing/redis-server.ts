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

/**
 * The process id of the Redis server on `port` (from INFO server), or undefined while none
 * answers. A free port found by freePort can be taken by another test file's server before ours
 * binds it; ours then exits, and only its own pid tells a server apart from the neighbour's.
 */
function serverPid(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let seen = '';
    const done = (pid: number | undefined) => {
      socket.destroy();
      resolve(pid);
    };
    socket.setTimeout(500, () => done(undefined));
    socket.once('error', () => done(undefined));
    socket.once('connect', () => socket.write('INFO server\r\n'));
    socket.on('data', (data) => {
      seen += data.toString();
      const pid = /process_id:(\d+)/.exec(seen);
      if (pid) done(Number(pid[1]));
      else if (seen.startsWith('-')) done(undefined);
    });
  });
}

async function launch(port: number): Promise<ChildProcess> {
  // Its own folder: a test that turns persistence on writes there, never into the working directory.
  const dir = mkdtempSync(path.join(tmpdir(), 'switchyard-redis-'));
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no', '--dir', dir], { stdio: ['ignore', 'pipe', 'pipe'] });
  // Redis logs to stdout (a port it cannot bind, among others): the last of it explains an exit.
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-2000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const failed = new Promise<never>((_, reject) => {
    child.once('error', (err: NodeJS.ErrnoException) => reject(err.code === 'ENOENT' ? new Error(NOT_INSTALLED) : err));
    child.once('exit', (code) => reject(new PortTaken(`redis-server exited with ${code} before answering: ${output.trim()}`)));
  });
  failed.catch(() => undefined);
  const ready = (async () => {
    for (const deadline = Date.now() + 10_000; Date.now() < deadline; await sleep(20)) if ((await serverPid(port)) === child.pid) return;
    throw new Error(`redis-server on port ${port} did not answer within 10 s`);
  })();
  await Promise.race([ready, failed]);
  return child;
}

/** Our server exited before it answered: most often, another process took the port first. */
class PortTaken extends Error {}

/** A server on a free port (on `preferredPort` if it is free: tests that need a port taken use it). */
export async function startRedisServer(preferredPort?: number): Promise<RedisServer> {
  let port = preferredPort ?? (await freePort());
  let child: ChildProcess | undefined;
  for (let tries = 1; !child; tries++) {
    try {
      child = await launch(port);
    } catch (err) {
      if (!(err instanceof PortTaken) || tries === 5) throw err;
      port = await freePort();
    }
  }
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
