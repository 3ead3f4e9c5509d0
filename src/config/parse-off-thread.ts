/**
 * parseConfigFile on a worker thread, for reloads of big files: the serving thread only receives
 * the result (a structured clone) and places later issues with the position table the worker
 * made, so errors keep their file:line:col without the YAML document.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { MessageChannel, type MessagePort, receiveMessageOnPort, Worker } from 'node:worker_threads';
import type { ConfigIssue } from './issues.ts';
import type { KeySecret } from './key-secrets.ts';
import { parseConfigFile, type ParsedConfig } from './load.ts';
import { PlacedIssues, type PositionTable } from './source.ts';
import type { GatewayConfig } from './types.ts';
import { makeRedactor, type RedactionIndex } from '../runtime/redact.ts';
import { stepDone } from '../runtime/reload-steps.ts';

export interface ParseRequest {
  file: string;
  env: NodeJS.ProcessEnv;
  /** Where the worker posts its WorkerReply (then it posts a bare 'done' to its parent). */
  reply: MessagePort;
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
  /** How many KeyParts were posted before this snapshot (its config.keys, keySecrets and keyJson are empty). */
  keyParts?: number;
}

/** A slice of the keys, with their digests and JSON. */
export interface KeyPart {
  keys: GatewayConfig['keys'];
  keySecrets: readonly (readonly KeySecret[])[];
  keyJson: string[];
}

/** Keys per message: each takes a few ms to copy on the serving thread. */
export const KEYS_PER_PART = 1_000;

export type WorkerReply = { ok: true; snapshot: ParsedSnapshot } | { ok: false; message: string };

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
    // The result comes on a port of its own, taken when the worker says it is there: the copy is
    // then one synchronous step this thread can time, in a task of its own (reload-steps.ts).
    const { port1, port2 } = new MessageChannel();
    const workerData: ParseRequest = { file: path.resolve(file), env: { ...env }, reply: port2 };
    const worker = new Worker(WORKER, { workerData, transferList: [port2] });
    let settled = false;
    worker.once('message', () => {
      settled = true;
      stepDone('while the worker parsed');
      void worker.terminate();
      receive(port1)
        .then(resolve, reject)
        .finally(() => port1.close());
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

/**
 * Takes the worker's messages, all queued on `port` by now: the key parts one per task (requests
 * waiting on this thread go between them), then the snapshot.
 */
async function receive(port: MessagePort): Promise<ParsedConfig> {
  const parts: KeyPart[] = [];
  for (;;) {
    const message = receiveMessageOnPort(port)?.message as KeyPart | WorkerReply | undefined;
    stepDone('receive a part');
    if (!message) throw new Error('the config parser thread answered nothing');
    if (!('ok' in message)) {
      parts.push(message);
      await new Promise((resolve) => setImmediate(resolve));
      continue;
    }
    if (!message.ok) throw new Error(message.message);
    const s = message.snapshot;
    if (parts.length !== (s.keyParts ?? 0)) throw new Error(`the config parser thread sent ${parts.length} of ${s.keyParts} key parts`);
    if (s.config && s.keyParts !== undefined) {
      s.config.keys = parts.flatMap((p) => p.keys);
      s.keySecrets = parts.flatMap((p) => p.keySecrets);
      s.keyJson = parts.flatMap((p) => p.keyJson);
    }
    return fromSnapshot(s);
  }
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
