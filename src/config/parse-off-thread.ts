/**
 * parseConfigFile on a worker thread, for reloads of big files: the serving thread only receives
 * the result (a structured clone) and places later issues with the position table the worker
 * made, so errors keep their file:line:col without the YAML document.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { ConfigIssue } from './issues.ts';
import type { KeySecret } from './key-secrets.ts';
import { parseConfigFile, type ParsedConfig } from './load.ts';
import { PlacedIssues, type PositionTable } from './source.ts';
import type { GatewayConfig } from './types.ts';
import { makeRedactor, type RedactionIndex } from '../runtime/redact.ts';

export interface ParseRequest {
  file: string;
  env: NodeJS.ProcessEnv;
}

/** What the worker sends back: a ParsedConfig with its Maps as entry lists and no YAML document. */
export interface ParsedSnapshot {
  file: string;
  issues: ConfigIssue[];
  positions: PositionTable;
  config?: GatewayConfig;
  configDir: string;
  unavailable: [string, string][];
  inputs: [string, string][];
  fileSecrets: string[];
  keySecrets?: readonly (readonly KeySecret[])[];
  keyJson?: string[];
  redaction?: RedactionIndex;
}

type WorkerReply = { ok: true; snapshot: ParsedSnapshot } | { ok: false; message: string };

// Beside this module, with its extension: parse-worker.ts from the sources, .js once built.
const WORKER = new URL(`./parse-worker${path.extname(fileURLToPath(import.meta.url))}`, import.meta.url);

/**
 * Below this size the parse stays on this thread: it takes milliseconds, less than starting a
 * thread that loads the YAML library and compiles the schema (~100 ms, a second on a busy machine).
 * 64 KiB is about 1,000 keys.
 */
const OFF_THREAD_BYTES = 64 * 1024;

export async function parseConfigFileOffThread(file: string, env: NodeJS.ProcessEnv = process.env): Promise<ParsedConfig> {
  const size = await stat(file).then(
    (s) => s.size,
    () => 0, // a missing file: parseConfigFile says so, as before
  );
  if (size < OFF_THREAD_BYTES) return parseConfigFile(file, env);
  return inWorker(file, env);
}

function inWorker(file: string, env: NodeJS.ProcessEnv): Promise<ParsedConfig> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER, { workerData: { file: path.resolve(file), env: { ...env } } satisfies ParseRequest });
    let settled = false;
    worker.once('message', (reply: WorkerReply) => {
      settled = true;
      void worker.terminate();
      if (reply.ok) resolve(fromSnapshot(reply.snapshot));
      else reject(new Error(reply.message));
    });
    worker.once('error', (err) => {
      settled = true;
      reject(err);
    });
    worker.once('exit', (code) => {
      if (!settled) reject(new Error(`the config parser thread stopped (exit code ${code}) before answering`));
    });
  });
}

function fromSnapshot(s: ParsedSnapshot): ParsedConfig {
  const source = new PlacedIssues(s.file, s.positions);
  source.issues.push(...s.issues);
  source.scrub = makeRedactor(s.fileSecrets);
  return {
    source,
    config: s.config,
    configDir: s.configDir,
    unavailable: new Map(s.unavailable),
    inputs: new Map(s.inputs),
    fileSecrets: s.fileSecrets,
    keySecrets: s.keySecrets,
    keyJson: s.keyJson,
    redaction: s.redaction,
  };
}
