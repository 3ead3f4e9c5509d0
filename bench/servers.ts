/**
 * The processes of a benchmark run, each pinned to a core with taskset(1): the fake upstream on
 * the load generator's core, every server under test on the other. Each writes its output to a
 * file: a pipe drained by the busy load generator would throttle a server's request log.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { openSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, Socket } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SERVE_FLAGS, servingEnv } from '../bin/serving-env.mjs';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** The checkout whose gateway is measured: this one, or BENCH_GATEWAY_ROOT (e.g. a worktree of the commit before a change). */
export const GATEWAY_ROOT = path.resolve(process.env.BENCH_GATEWAY_ROOT ?? ROOT);
/** The load generator (this process) and the upstream share one core, the server under test has the other. */
export const LOAD_CORE = 0;
export const SERVER_CORE = 1;
export const KEY = 'sk-bench-0123456789';
/** Node flags for the gateway, before the bin's own (BENCH_GATEWAY_FLAGS, for experiments: heap flags given replace the bin's). */
const GATEWAY_FLAGS = process.env.BENCH_GATEWAY_FLAGS?.split(' ').filter(Boolean) ?? [];
/** The V8 flags bin/switchyard.mjs gives the gateway (heap and compiler); the hop gets the same, so GC tuning is not what is compared. */
const HOP_FLAGS = [...SERVE_FLAGS, ...(process.env.BENCH_HOP_FLAGS?.split(' ').filter(Boolean) ?? [])];

export interface Server {
  name: string;
  url: string;
  pid: number;
  child: ChildProcess;
  logFile: string;
}

/** How a gateway under test differs from the default (everything on). */
export interface GatewayVariant {
  name: string;
  log?: 'info' | 'warn';
  metrics?: boolean;
  tracing?: boolean;
  /** The request ledger: 'off', or a PostgreSQL URL; default the SQLite state file (the memory backend's default). */
  ledger?: 'off' | { postgres: string };
  /** The guardrails stage with the built-in detectors: PII redacted (and restored) on the request, secrets blocked on both sites. */
  guardrails?: boolean;
  /** The exact response cache (memory, scope key). */
  cache?: boolean;
  /** Stored Responses (`state.responses.enabled`; default on, as the gateway's). */
  storedResponses?: boolean;
  /** Environment variables added to (or, as "", removed from) the gateway's, e.g. a malloc setting to try. */
  env?: Record<string, string>;
}

/** Pins this process (the load generator) and all its threads to the load core. */
export function pinSelf(): void {
  execFileSync('taskset', ['-a', '-p', '-c', String(LOAD_CORE), String(process.pid)], { stdio: 'ignore' });
}

/** The cores a process may run on, as /proc says (to show in the report that pinning took). */
export function cpusAllowed(pid: number): string {
  return /Cpus_allowed_list:\s*(\S+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? '?';
}

/** The environment of the processes under test: no NODE_OPTIONS or OTEL_* of whoever runs the benchmark. */
function childEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of Object.keys(env)) if (name === 'NODE_OPTIONS' || name.startsWith('OTEL_')) delete env[name];
  return env;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
    probe.on('error', reject);
  });
}

function answers(port: number, readyPath: string | undefined): Promise<boolean> {
  if (readyPath)
    return fetch(`http://127.0.0.1:${port}${readyPath}`).then(
      (r) => r.ok,
      () => false,
    );
  return new Promise((resolve) => {
    const socket = new Socket();
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.connect(port, '127.0.0.1');
  });
}

async function startPinned(dir: string, name: string, core: number, command: string[], port: number, readyPath?: string, cwd = ROOT, extraEnv: Record<string, string> = {}): Promise<Server> {
  const logFile = path.join(dir, `${name.replace(/\W+/g, '-')}.log`);
  const out = openSync(logFile, 'a');
  // Every server gets the environment npm start gives the gateway (the malloc setting): like the V8 flags, not what is compared.
  const env = servingEnv(childEnv());
  for (const [k, v] of Object.entries(extraEnv)) {
    if (v === '') delete env[k];
    else env[k] = v;
  }
  const child = spawn('taskset', ['-c', String(core), ...command], { cwd, stdio: ['ignore', out, out], env });
  let exited = false;
  child.once('exit', () => (exited = true));
  for (let waited = 0; waited < 30_000 && !exited; waited += 100) {
    if (await answers(port, readyPath)) return { name, url: `http://127.0.0.1:${port}`, pid: child.pid as number, child, logFile };
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill('SIGKILL');
  throw new Error(`${name} did not start within 30 s:\n${readFileSync(logFile, 'utf8').slice(-2000)}`);
}

export async function startUpstream(dir: string): Promise<Server> {
  const port = await freePort();
  return startPinned(dir, 'upstream', LOAD_CORE, [process.execPath, 'bench/upstream.ts', String(port)], port);
}

export async function startHop(dir: string, upstream: Server): Promise<Server> {
  const port = await freePort();
  return startPinned(dir, 'hop', SERVER_CORE, [process.execPath, ...HOP_FLAGS, 'bench/bare-proxy.mjs', upstream.url, String(port)], port);
}

/** The stack's floor (bench/floor.mjs): fastify + undici doing the gateway's JSON work, with the hop's V8 flags. */
export async function startFloor(dir: string, upstream: Server): Promise<Server> {
  const port = await freePort();
  return startPinned(dir, 'floor', SERVER_CORE, [process.execPath, ...HOP_FLAGS, 'bench/floor.mjs', upstream.url, String(port)], port);
}

/**
 * The gateway as its README starts it: `npm start` (scripts/start.mjs: the compiled dist/, built
 * first if the sources changed, run by the bin, which gives itself its V8 flags) with a config, a
 * port and --no-watch; auth, validation, the request log line (JSON, to a file) and metrics on.
 */
export async function startGateway(dir: string, upstream: Server, variant: GatewayVariant, root = GATEWAY_ROOT): Promise<Server> {
  const port = await freePort();
  const config = path.join(dir, `${variant.name.replace(/\W+/g, '-')}.yaml`);
  writeFileSync(config, gatewayConfig(upstream, variant));
  return startPinned(
    dir,
    variant.name,
    SERVER_CORE,
    [process.execPath, ...GATEWAY_FLAGS, 'scripts/start.mjs', '--config', config, '--port', String(port), '--no-watch'],
    port,
    '/readyz',
    root,
    variant.env,
  );
}

export function gatewayConfig(upstream: Server, variant: GatewayVariant): string {
  return `# Written by bench/servers.ts for the "${variant.name}" run.
server: { host: 127.0.0.1, port: 8080 }
log: { level: ${variant.log ?? 'info'}, format: json }
keys: [{ name: bench, key: ${KEY} }]
providers:
  upstream: { plugin: openai, baseUrl: "${upstream.url}/v1" }
models:
  bench: { targets: [{ provider: upstream, model: bench }] }
  bench-slow: { targets: [{ provider: upstream, model: bench-slow }] }
  bench-hold: { targets: [{ provider: upstream, model: bench-hold }] }
metrics: { enabled: ${variant.metrics ?? true} }
${variant.tracing ? `tracing: { endpoint: "${upstream.url}", protocol: http/protobuf }\n` : ''}${stateYaml(variant)}
pipeline: [auth, validate, route, ${extraStages(variant)}retry, transform-response, log]
`;
}

/** The opt-in stages of a variant, between route and retry as the README places them. */
function extraStages({ guardrails, cache }: GatewayVariant): string {
  const stages: string[] = [];
  if (guardrails) stages.push('{ stage: guardrails, options: { rules: { pii: { detect: [pii], action: redact, restore: true, on: [request] }, secrets: { detect: [secrets], action: block } } } }');
  if (cache) stages.push('{ stage: cache, options: { ttl: 3600, scope: key } }');
  return stages.map((s) => `${s}, `).join('');
}

/** Each gateway its own state file (spend, the SQLite ledger, stored Responses): no variant writes into another's. */
function stateYaml({ name, ledger, storedResponses }: GatewayVariant): string {
  const state = [`file: ${name.replace(/\W+/g, '-')}.sqlite`];
  if (ledger !== undefined) state.push(`ledger: ${ledger === 'off' ? '{ enabled: false }' : `{ postgres: { url: "${ledger.postgres}" } }`}`);
  if (storedResponses === false) state.push('responses: { enabled: false }');
  return `state: { ${state.join(', ')} }`;
}

/** A server under test with extra Node flags (a profiler's), on the server core and a free port. */
export async function startPinnedNode(dir: string, name: string, args: string[], readyPath: string | undefined, cwd: string): Promise<Server> {
  const port = await freePort();
  // The hop takes its port as an argument, the gateway as an option.
  const portArgs = readyPath ? ['--port', String(port)] : [String(port)];
  return startPinned(dir, name, SERVER_CORE, [process.execPath, ...args, ...portArgs], port, readyPath, cwd);
}

/** SIGTERM, then SIGKILL after 5 s. Only the processes this benchmark started. */
export async function stop(server: Server): Promise<void> {
  if (server.child.exitCode !== null || server.child.signalCode !== null) return;
  const exited = new Promise((r) => server.child.once('exit', r));
  server.child.kill('SIGTERM');
  const timer = setTimeout(() => server.child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}
