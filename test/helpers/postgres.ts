/**
 * A real PostgreSQL server for a test file: `initdb` in a temporary folder, `pg_ctl` on a free
 * loopback port (no Unix socket outside the folder, no fsync: a test's data need not survive
 * the machine), stopped and started again on the same port to play an outage. PostgreSQL
 * refuses to run as root, so as root every program runs as the `postgres` user (setpriv).
 * When the programs are missing the test fails and says what to install; it never skips.
 */
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { chmod, chown, mkdtemp, rm } from 'node:fs/promises';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface PostgresServer {
  readonly port: number;
  /** postgres://switchyard@127.0.0.1:port/postgres (trust authentication: no password). */
  readonly url: string;
  /** A URL for another database on this server (created by createDatabase). */
  urlOf(database: string): string;
  createDatabase(name: string): Promise<string>;
  /** Stops the server: 'immediate' is a crash (no checkpoint), 'fast' a clean shutdown. */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  /** Starts it again on the same port with its data. */
  start(): Promise<void>;
  /** Stops it and deletes its folder. */
  destroy(): Promise<void>;
}

const NOT_INSTALLED =
  "PostgreSQL's initdb and pg_ctl were not found (looked in $PG_BIN, /usr/lib/postgresql/<version>/bin and PATH): the ledger's PostgreSQL tests need a real server. Install it (Debian/Ubuntu: apt-get install postgresql; Fedora: dnf install postgresql-server; macOS: brew install postgresql) and run the tests again.";

/** Where initdb and pg_ctl are: $PG_BIN, Debian's versioned folder (newest first), then PATH. */
export function postgresBinDir(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const candidates: string[] = [];
  if (env.PG_BIN) candidates.push(env.PG_BIN);
  const debian = '/usr/lib/postgresql';
  if (existsSync(debian)) {
    const versions = readdirSync(debian)
      .filter((v) => /^\d+$/.test(v))
      .sort((a, b) => Number(b) - Number(a));
    candidates.push(...versions.map((v) => path.join(debian, v, 'bin')));
  }
  candidates.push(...(env.PATH ?? '').split(path.delimiter));
  return candidates.find((dir) => dir && existsSync(path.join(dir, 'initdb')) && existsSync(path.join(dir, 'pg_ctl')));
}

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  if (!address || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** Runs `program` as the postgres user when we are root (PostgreSQL refuses root), else as ourselves. */
async function asPostgres(bin: string, program: string, args: string[], asUser: { uid: number; gid: number } | undefined): Promise<string> {
  const file = path.join(bin, program);
  const [cmd, argv] = asUser ? ['setpriv', [`--reuid=${asUser.uid}`, `--regid=${asUser.gid}`, '--clear-groups', '--', file, ...args]] : [file, args];
  try {
    const { stdout } = await run(cmd, argv, { env: { ...process.env, LC_ALL: 'C' }, timeout: 60_000 });
    return stdout;
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`${program} ${args[0] ?? ''} failed: ${e.stderr || e.message}`);
  }
}

async function postgresUser(): Promise<{ uid: number; gid: number } | undefined> {
  if (userInfo().uid !== 0) return undefined;
  try {
    const uid = Number((await run('id', ['-u', 'postgres'])).stdout.trim());
    const gid = Number((await run('id', ['-g', 'postgres'])).stdout.trim());
    return { uid, gid };
  } catch {
    throw new Error('running as root, and there is no `postgres` user to run PostgreSQL as (it refuses to run as root): install the postgresql package, or run the tests as another user.');
  }
}

/**
 * Starts a fresh server (`durableCommits`: a COMMIT survives a crash of the server; slower).
 * @example
 * const pg = await startPostgres();
 * afterAll(() => pg.destroy());
 * const url = await pg.createDatabase('ledger_a');
 */
export async function startPostgres(options: { durableCommits?: boolean } = {}): Promise<PostgresServer> {
  const bin = postgresBinDir();
  if (!bin) throw new Error(NOT_INSTALLED);
  const user = await postgresUser();
  const dir = await mkdtemp(path.join(tmpdir(), 'switchyard-pg-'));
  if (user) await chown(dir, user.uid, user.gid);
  await chmod(dir, 0o700);
  const data = path.join(dir, 'data');
  let port = await freePort();
  await asPostgres(bin, 'initdb', ['-D', data, '-U', 'switchyard', '--auth=trust', '-E', 'UTF8', '--no-sync'], user);
  // synchronous_commit=off acknowledges a COMMIT before its WAL is written: a crash (`stop('immediate')`)
  // then loses the last ~200 ms of acknowledged commits. A test that crashes the server and counts
  // rows asks for durableCommits (the WAL is written, not fsynced: it survives the process, not the machine).
  const commits = options.durableCommits ? 'on' : 'off';
  const log = path.join(dir, 'server.log');
  const settings = () => `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=${commits} -c full_page_writes=off`;
  const start = () => asPostgres(bin, 'pg_ctl', ['start', '-D', data, '-w', '-t', '60', '-l', log, '-o', settings()], user).then(() => undefined);
  const stop = (mode: 'fast' | 'immediate' = 'fast') => asPostgres(bin, 'pg_ctl', ['stop', '-D', data, '-w', '-m', mode], user).then(() => undefined);
  // The free port can be taken by another test file's server before ours binds it: then another port.
  for (let tries = 1; ; tries++) {
    try {
      await start();
      break;
    } catch (err) {
      const said = existsSync(log) ? readFileSync(log, 'utf8') : '';
      if (tries === 5 || !/could not bind|Address already in use/.test(said)) throw err;
      port = await freePort();
    }
  }
  let running = true;
  const urlOf = (database: string) => `postgres://switchyard@127.0.0.1:${port}/${database}`;
  return {
    port,
    url: urlOf('postgres'),
    urlOf,
    async createDatabase(name) {
      if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a plain database name: ${name}`);
      const pg = (await import('pg')).default;
      const client = new pg.Client({ connectionString: urlOf('postgres') });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE ${name}`);
      } finally {
        await client.end();
      }
      return urlOf(name);
    },
    async stop(mode) {
      await stop(mode);
      running = false;
    },
    async start() {
      await start();
      running = true;
    },
    async destroy() {
      if (running) await stop('immediate').catch(() => undefined);
      running = false;
      await rm(dir, { recursive: true, force: true });
    },
  };
}
