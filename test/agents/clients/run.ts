/**
 * What every client runner shares: where the pinned CLIs are installed (test/agents/node_modules,
 * by scripts/test-services.mjs), a bounded child-process run with a clean environment, and a
 * limit on how many clients run at once (the suite shares 2 cores).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AgentCase } from '../script/model.ts';

/** What a client is given for one case. */
export interface ClientContext {
  /** http://127.0.0.1:port of the gateway (no /v1). */
  gatewayUrl: string;
  apiKey: string;
  /** A plain alias the gateway serves; a client that runs with its own default model ignores it. */
  alias: string;
  prompt: string;
  case: AgentCase;
  /** The case's working directory (the file is written there) and a HOME of its own. */
  workDir: string;
  homeDir: string;
}

export interface RunResult {
  exitCode: number | null;
  /** What the client printed for its user (a CLI's stdout; an SDK's final text). */
  output: string;
  /** Diagnostics: a CLI's stderr, an SDK's error. */
  log: string;
  /** How long the client ran (not counting its wait for a turn to run). */
  seconds: number;
}

export interface AgentClient {
  /** Stable id, used in the matrix. */
  id: string;
  /** The wire protocol the client speaks to the gateway. */
  speaks: 'chat' | 'responses' | 'messages' | 'gemini';
  run(ctx: ClientContext): Promise<RunResult>;
}

const AGENTS_DIR = path.dirname(path.dirname(fileURLToPath(import.meta.url)));

/** A pinned CLI from test/agents/node_modules/.bin, or one clear error saying how to install it. */
export function cliPath(name: string): string {
  const bin = path.join(AGENTS_DIR, 'node_modules', '.bin', name);
  if (!existsSync(bin)) {
    throw new Error(
      `${name} is not installed in test/agents/node_modules: run \`npm test\` (scripts/test-services.mjs installs the pinned agent CLIs) or \`npm install --prefix test/agents --no-package-lock --ignore-scripts\``,
    );
  }
  return bin;
}

/** A fresh temporary folder. */
export function tempDir(prefix: string): string {
  return mkdtempSync(path.join(tmpdir(), `switchyard-agents-${prefix}-`));
}

let running = 0;
const waiting: Array<() => void> = [];
/** How many clients run at once: a CLI start takes most of a core for a few seconds. */
export const CONCURRENCY = Number(process.env.SWITCHYARD_AGENTS_CONCURRENCY ?? 2);

/** Runs `task` when fewer than CONCURRENCY others are running, and times it. */
export async function limited(task: () => Promise<Omit<RunResult, 'seconds'>>): Promise<RunResult> {
  if (running >= CONCURRENCY) await new Promise<void>((resolve) => waiting.push(resolve));
  running++;
  const started = performance.now();
  try {
    return { ...(await task()), seconds: Math.round(performance.now() - started) / 1000 };
  } finally {
    running--;
    waiting.shift()?.();
  }
}

/**
 * A proxy on a loopback port nothing listens on: whatever a CLI would fetch from the internet
 * besides the model (opencode asks the npm registry for its plugin at every start, whatever its
 * flags say) fails at once instead of reaching out, so the cases pass offline and say so.
 */
const NOWHERE = 'http://127.0.0.1:9';
const OFFLINE: Record<string, string> = {
  HTTPS_PROXY: NOWHERE,
  HTTP_PROXY: NOWHERE,
  ALL_PROXY: NOWHERE,
  https_proxy: NOWHERE,
  http_proxy: NOWHERE,
  NO_PROXY: '127.0.0.1,localhost',
  no_proxy: '127.0.0.1,localhost',
  NODE_USE_ENV_PROXY: '1',
};

/** Whatever of the parent environment a CLI needs to run at all (no keys, no user config), offline. */
function baseEnv(homeDir: string): Record<string, string> {
  const env: Record<string, string> = { HOME: homeDir, PATH: process.env.PATH ?? '/usr/bin:/bin', TMPDIR: homeDir, LANG: 'C.UTF-8', TERM: 'dumb', NO_COLOR: '1', CI: '1', ...OFFLINE };
  for (const dir of ['XDG_CONFIG_HOME', 'XDG_DATA_HOME', 'XDG_CACHE_HOME', 'XDG_STATE_HOME']) env[dir] = path.join(homeDir, dir.toLowerCase());
  return env;
}

/** Runs a CLI in the case's folder with `env` over a clean base, killed after `timeoutMs`. */
export function runCli(bin: string, args: string[], ctx: ClientContext, env: Record<string, string>, timeoutMs = 180_000): Promise<RunResult> {
  return limited(
    () =>
      new Promise<Omit<RunResult, 'seconds'>>((resolve) => {
        const child = spawn(bin, args, { cwd: ctx.workDir, env: { ...baseEnv(ctx.homeDir), ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
        let output = '';
        let log = '';
        child.stdout.on('data', (d) => (output += d));
        child.stderr.on('data', (d) => (log += d));
        // The whole process group: the CLIs start helpers (shells, sandboxes) of their own.
        const timer = setTimeout(() => {
          log += `\n[killed after ${timeoutMs} ms]`;
          if (child.pid) process.kill(-child.pid, 'SIGKILL');
        }, timeoutMs);
        child.on('error', (err) => {
          clearTimeout(timer);
          resolve({ exitCode: null, output, log: `${log}\n${err.message}` });
        });
        child.on('close', (code) => {
          clearTimeout(timer);
          resolve({ exitCode: code, output, log });
        });
      }),
  );
}

/** An SDK's error as its user sees it: class, HTTP status (each SDK names it its own way), message. */
function sdkError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const { status, statusCode } = err as { status?: unknown; statusCode?: unknown };
  const code = typeof status === 'number' ? status : typeof statusCode === 'number' ? statusCode : undefined;
  return code && !err.message.startsWith(String(code)) ? `${err.name}: ${code} ${err.message}` : `${err.name}: ${err.message}`;
}

/** Runs an SDK case in this process: exit code 0 with its final text, or 1 with the error. */
export function runSdk(task: () => Promise<string>): Promise<RunResult> {
  return limited(() =>
    task().then(
      (output) => ({ exitCode: 0, output, log: '' }),
      (err: unknown) => ({ exitCode: 1, output: '', log: sdkError(err) }),
    ),
  );
}
