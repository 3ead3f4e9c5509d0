/**
 * `${file:<path>}`: a secret read from a file, the way Kubernetes (a Secret volume), Docker
 * secrets and systemd credentials hand secrets to a process. A relative path is from the config
 * file's folder; the content is trimmed (a Secret made from a file usually ends with a newline).
 * One reader per parse: a file named twice is read once, so both places get the same value.
 */
import path from 'node:path';
import { readWithFingerprint } from './fingerprint.ts';

export type FileRead = { value: string } | { file: string; reason: string };

const REASONS: Record<string, string> = {
  ENOENT: 'no such file',
  ENOTDIR: 'no such file',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EISDIR: 'it is a folder, not a file',
};

/** Why a file could not be read, in words an operator acts on. */
export function unreadableReason(err: NodeJS.ErrnoException): string {
  return REASONS[err.code ?? ''] ?? err.code ?? String(err.message);
}

export class SecretFiles {
  readonly #baseDir: string;
  readonly #read = new Map<string, FileRead>();
  /** Every file referenced, readable or not → its fingerprint: a change to any of them reloads. */
  readonly fingerprints = new Map<string, string>();
  /** The values read: secrets for the generation's redactor, whichever option they went into. */
  readonly values = new Set<string>();

  constructor(baseDir: string) {
    this.#baseDir = baseDir;
  }

  read(written: string): FileRead {
    const file = path.resolve(this.#baseDir, written.trim());
    let result = this.#read.get(file);
    if (result) return result;
    const read = readWithFingerprint(file);
    this.fingerprints.set(file, read.fingerprint);
    if ('error' in read) result = { file, reason: unreadableReason(read.error) };
    else {
      const value = read.bytes.toString('utf8').trim();
      result = value ? { value } : { file, reason: 'it is empty' };
      if (value) this.values.add(value);
    }
    this.#read.set(file, result);
    return result;
  }
}
