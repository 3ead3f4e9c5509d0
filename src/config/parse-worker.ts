/**
 * A reload's parse, on a worker thread: YAML with positions, interpolation, ajv and the
 * cross-checks, the keys' sha256 digests and the redaction index. With 10,000 keys this is
 * seconds of CPU that used to stop every request; here it only costs the serving thread the
 * copy of the result (config/parse-off-thread.ts).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { parseConfigFile } from './load.ts';
import { plainKeySecrets } from '../runtime/keys.ts';
import { redactionIndex } from '../runtime/redact.ts';
import { KEYS_PER_PART, type KeyPart, type ParsedSnapshot, type ParseRequest, type WorkerReply } from './parse-off-thread.ts';

const { file, env, reply } = workerData as ParseRequest;
const answer = (message: WorkerReply, transfer: ArrayBuffer[] = []) => {
  reply.postMessage(message, transfer);
  parentPort?.postMessage('done');
};
try {
  const parsed = await parseConfigFile(file, env);
  const { source, config } = parsed;
  const snapshot: ParsedSnapshot = {
    file: source.file,
    issues: source.issues,
    positions: source.positionTable(),
    config,
    configDir: parsed.configDir,
    unavailable: [...parsed.unavailable],
    inputs: [...parsed.inputs],
    fileSecrets: [...parsed.fileSecrets],
    // Without their paths (only the checks above used them): 10,000 small arrays less to copy.
    keySecrets: config ? parsed.keySecrets?.map((list) => list.map((k) => ({ ...k, path: [] }))) : undefined,
    keyJson: config?.keys.map((k) => JSON.stringify(k)),
    redaction: config ? redactionIndex([...parsed.fileSecrets, ...plainKeySecrets(config.keys, parsed.keySecrets)]) : undefined,
  };
  // The keys follow in parts, each taken by the serving thread in a task of its own (a copy of
  // 10,000 keys at once is a stall); the window hashes move, not copied: they are most of the bytes.
  const keys: KeyPart = { keys: config?.keys ?? [], keySecrets: snapshot.keySecrets ?? [], keyJson: snapshot.keyJson ?? [] };
  const parts = Math.ceil(keys.keys.length / KEYS_PER_PART);
  const head: ParsedSnapshot = { ...snapshot, config: config && { ...config, keys: [] }, keySecrets: config && [], keyJson: config && [], keyParts: parts };
  for (let i = 0; i < parts; i++) {
    const slice = (list: readonly unknown[]) => list.slice(i * KEYS_PER_PART, (i + 1) * KEYS_PER_PART);
    reply.postMessage({ keys: slice(keys.keys), keySecrets: slice(keys.keySecrets), keyJson: slice(keys.keyJson) });
  }
  answer({ ok: true, snapshot: head }, snapshot.redaction ? [snapshot.redaction.windows.buffer as ArrayBuffer] : []);
} catch (err) {
  answer({ ok: false, message: String((err as Error)?.message ?? err) });
}
