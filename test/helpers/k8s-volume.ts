/**
 * A Kubernetes ConfigMap or Secret volume, written as the kubelet's atomic writer writes one: each
 * key is `<dir>/<key>` → `..data/<key>`, and `..data` → `..<timestamp>`, a folder holding the
 * content. An update writes a new timestamped folder, points a `..data_tmp` symlink at it,
 * renames `..data_tmp` over `..data` (the one atomic step), adds or removes the per-key links,
 * then removes the old folder. So a reader never sees a half-written volume, and a watcher of
 * `<dir>` sees events for `..data`, `..data_tmp` and the folders, never for `<key>`.
 */
import { lstatSync, mkdirSync, readdirSync, renameSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';

let sequence = 0;

/** `..2026_11_26_10_00_00.123456789`, unique within this process. */
function timestamped(): string {
  const now = new Date();
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  const nanos = p(now.getUTCMilliseconds(), 3) + p(++sequence % 1_000_000, 6);
  return `..${now.getUTCFullYear()}_${p(now.getUTCMonth() + 1)}_${p(now.getUTCDate())}_${p(now.getUTCHours())}_${p(now.getUTCMinutes())}_${p(now.getUTCSeconds())}.${nanos}`;
}

const exists = (file: string) => {
  try {
    lstatSync(file);
    return true;
  } catch {
    return false;
  }
};

export class ProjectedVolume {
  readonly dir: string;
  #current: string | undefined;
  #keys = new Set<string>();

  /** A volume at `dir` (created), with `files` (key → content) as its first content. */
  constructor(dir: string, files: Record<string, string>) {
    this.dir = dir;
    mkdirSync(dir, { recursive: true });
    this.update(files);
  }

  /** Where a key is read from: the link, as a container sees it. */
  path(key: string): string {
    return path.join(this.dir, key);
  }

  /** Replaces the whole content, atomically, as a `kubectl apply` of the ConfigMap or Secret does. */
  update(files: Record<string, string>): void {
    const folder = timestamped();
    mkdirSync(path.join(this.dir, folder));
    for (const [key, content] of Object.entries(files)) writeFileSync(path.join(this.dir, folder, key), content, { mode: 0o644 });
    const tmp = path.join(this.dir, '..data_tmp');
    symlinkSync(folder, tmp);
    renameSync(tmp, path.join(this.dir, '..data'));
    for (const key of Object.keys(files)) if (!exists(this.path(key))) symlinkSync(path.join('..data', key), this.path(key));
    for (const key of this.#keys) if (!(key in files)) unlinkSync(this.path(key));
    this.#keys = new Set(Object.keys(files));
    if (this.#current) rmSync(path.join(this.dir, this.#current), { recursive: true, force: true });
    this.#current = folder;
  }

  /** The timestamped folders present (one, between updates). */
  folders(): string[] {
    return readdirSync(this.dir).filter((name) => /^\.\.\d{4}_/.test(name));
  }
}
