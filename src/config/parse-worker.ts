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
import type { ParsedSnapshot, ParseRequest } from './parse-off-thread.ts';

const { file, env } = workerData as ParseRequest;
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
  // The window hashes move, not copied: they are most of the bytes.
  parentPort?.postMessage({ ok: true, snapshot }, snapshot.redaction ? [snapshot.redaction.windows.buffer as ArrayBuffer] : []);
} catch (err) {
  parentPort?.postMessage({ ok: false, message: String((err as Error)?.message ?? err) });
}
