/**
 * What a file's content was when it was read, as a short string: the SHA-256 of its bytes, or
 * why there were none. The config loader records one for every file a generation is built from
 * and the watcher compares against them, so an event that leaves the bytes as they were (a
 * `touch`, a Kubernetes `..data` swap to identical content) never causes a reload.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

export const MISSING = 'missing';

export function fingerprintOf(bytes: Buffer): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

/** `missing` for a file that does not exist (or a dangling symlink), `unreadable:<code>` otherwise. */
export function fingerprintOfError(err: unknown): string {
  const code = (err as NodeJS.ErrnoException)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR' ? MISSING : `unreadable:${code ?? 'error'}`;
}

/**
 * Synchronous on purpose: these are small files (a config, a key), and on a gateway whose event
 * loop is busy with requests each step of an asynchronous read (open, stat, read, close) waits
 * its turn behind them; under load that delayed noticing a change by most of a second.
 */
export function fingerprintFile(file: string): string {
  try {
    return fingerprintOf(readFileSync(file));
  } catch (err) {
    return fingerprintOfError(err);
  }
}

/** The bytes and their fingerprint, read once, so what is used and what is recorded agree. */
export function readWithFingerprint(file: string): { bytes: Buffer; fingerprint: string } | { error: NodeJS.ErrnoException; fingerprint: string } {
  try {
    const bytes = readFileSync(file);
    return { bytes, fingerprint: fingerprintOf(bytes) };
  } catch (err) {
    return { error: err as NodeJS.ErrnoException, fingerprint: fingerprintOfError(err) };
  }
}
