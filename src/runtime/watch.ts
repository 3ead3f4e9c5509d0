/**
 * Notices when the files a generation was built from change, however they change: written in
 * place, replaced by an atomic rename (what editors do), or swapped behind a symlink. Kubernetes
 * mounts a ConfigMap or Secret key as `<dir>/<key>` → `..data/<key>`, `..data` → a timestamped
 * folder, and updates it by renaming a new `..data` symlink over the old one: the events name
 * `..data`, `..data_tmp` and the folders, never `<key>`. So folders are watched, not files, any
 * event in one only schedules a check, and the check compares each file's content fingerprint
 * with the last one seen: a `touch`, or a swap to identical content, reloads nothing.
 */
import { readdirSync, readlinkSync, realpathSync, watch, type FSWatcher } from 'node:fs';
import path from 'node:path';
import { MISSING, fingerprintFile } from '../config/fingerprint.ts';

export interface Watcher {
  /**
   * Watches these now (after a reload: the files it read). The fingerprints seen so far are kept,
   * so a change made while the reload ran is still noticed; a file new to the watch starts from
   * `known` (what the reload read) when given, else from what is on disk now.
   */
  update(files: readonly string[], folders: readonly string[], known?: ReadonlyMap<string, string>): void;
  /**
   * The files as the only reader of them (this process's reload) read them: the baseline from now
   * on. A check may have read a file half-written; the reload after it read it whole, and that
   * is what serves. (Not for a cluster primary: each worker reads for itself.)
   */
  adopt(known: ReadonlyMap<string, string>): void;
  close(): void;
}

export interface FileChange {
  file: string;
  what: 'changed' | 'created' | 'removed' | 'unreadable';
}

export interface WatchOptions {
  /** Called once per check that found changes (after `debounceMs` without events). */
  onChange(changes: FileChange[]): void;
  /** Called when events came but no watched content changed. */
  onUnchanged?(): void;
  /** Default 100 ms: a save or a swap is a burst of events. */
  debounceMs?: number;
  /** Folders whose files `folderFilter` accepts are watched too (a plugin's sibling modules). */
  folders?: readonly string[];
  folderFilter?: RegExp;
  /** Fingerprints of files as the serving generation read them: one that differs already (changed while it was built) is reported at once. */
  known?: ReadonlyMap<string, string>;
}

/** Watches `files` (and the folders' files) until closed. */
export function watchFiles(initialFiles: readonly string[], options: WatchOptions): Watcher {
  const { onChange, onUnchanged, debounceMs = 100, folderFilter = /./ } = options;
  let files = [...initialFiles];
  let folders = [...(options.folders ?? [])];
  const seen = new Map<string, string>();
  /** What a reload read of files the watch has not checked yet. */
  const seeds = new Map<string, string>(options.known);
  /** Folders listed at least once: a file that appears in one after that is a new module. */
  const listed = new Set<string>();
  const watchers = new Map<string, FSWatcher>();
  /** Per watched folder, the entry names whose events matter (in a plugin folder, also what folderFilter accepts). */
  const relevant = new Map<string, Set<string>>();
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  /** Every watched file now: the named ones, and what the folders hold that the filter accepts. */
  const snapshot = (): Map<string, string> => {
    const all = new Set(files);
    for (const dir of folders) for (const name of list(dir)) if (folderFilter.test(name)) all.add(path.join(dir, name));
    return new Map([...all].map((file) => [file, fingerprintFile(file)] as const));
  };

  /**
   * Watches each file's folder, and the folder its symlinks lead to (an edit through the link).
   * In the file's folder the events that matter name the file or the link it points through
   * (`..data`); others (a state file written beside gateway.yaml) are not even checked.
   */
  const arm = () => {
    relevant.clear();
    const care = (dir: string, name: string) => {
      const names = relevant.get(dir) ?? new Set<string>();
      relevant.set(dir, names.add(name));
    };
    for (const file of files) {
      care(path.dirname(file), path.basename(file));
      const through = linkStep(file);
      if (through) care(path.dirname(file), through);
      const real = realPath(file);
      if (real) care(path.dirname(real), path.basename(real));
    }
    const dirs = new Set([...relevant.keys(), ...folders]);
    for (const [dir, w] of watchers) {
      if (dirs.has(dir)) continue;
      w.close();
      watchers.delete(dir);
    }
    for (const dir of dirs) {
      if (watchers.has(dir)) continue;
      try {
        const w = watch(dir, (_event, name) => {
          if (name === null || relevant.get(dir)?.has(name) || (folders.includes(dir) && folderFilter.test(name))) schedule();
        });
        // A folder removed under it (the old timestamped folder of a swap): re-armed at the next check.
        w.on('error', () => {
          w.close();
          if (watchers.get(dir) === w) watchers.delete(dir);
        });
        watchers.set(dir, w);
      } catch {
        // A folder that does not exist (yet) cannot be watched; its parent's events still check.
      }
    }
  };

  /** `report`: events caused this check, so say when they changed nothing. */
  const check = (report: boolean) => {
    if (closed) return;
    const now = snapshot();
    const changes: FileChange[] = [];
    for (const [file, fingerprint] of now) {
      const before = seeds.get(file) ?? seen.get(file);
      seeds.delete(file);
      if (before === undefined) {
        // New to the watch: a baseline, unless it appeared in a plugin folder already listed.
        if (listed.has(path.dirname(file)) && !files.includes(file) && fingerprint !== MISSING) changes.push({ file, what: 'created' });
      } else if (before !== fingerprint) changes.push({ file, what: describe(before, fingerprint) });
    }
    for (const file of seen.keys()) {
      if (!now.has(file) && listed.has(path.dirname(file)) && folders.includes(path.dirname(file))) changes.push({ file, what: 'removed' });
    }
    seen.clear();
    for (const [file, fingerprint] of now) seen.set(file, fingerprint);
    for (const dir of folders) listed.add(dir);
    arm();
    if (changes.length) onChange(changes);
    else if (report) onUnchanged?.();
  };

  const run = (report: boolean) => {
    try {
      check(report);
    } catch {
      // A check that failed (a folder unreadable for a moment) is retried at the next event.
    }
  };

  function schedule() {
    if (closed) return;
    clearTimeout(timer);
    timer = setTimeout(() => run(true), debounceMs);
  }

  arm();
  // The first check takes the fingerprints not known yet and reports known ones that changed
  // (on the next turn: not from inside the caller's own call).
  const first = setImmediate(() => run(false));
  return {
    update(nextFiles, nextFolders, known) {
      files = [...nextFiles];
      folders = [...nextFolders];
      for (const [file, fingerprint] of known ?? []) if (!seen.has(file)) seeds.set(file, fingerprint);
      arm();
      run(false);
    },
    adopt(known) {
      for (const [file, fingerprint] of known) seeds.set(file, fingerprint);
      run(false);
    },
    close() {
      closed = true;
      clearTimeout(timer);
      clearImmediate(first);
      for (const w of watchers.values()) w.close();
      watchers.clear();
    },
  };
}

function describe(before: string, after: string): FileChange['what'] {
  if (after === MISSING) return 'removed';
  if (before === MISSING) return 'created';
  return after.startsWith('sha256:') ? 'changed' : 'unreadable';
}

function list(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** The first step of a symlink given relative to its own folder (`..data` for `..data/gateway.yaml`). */
function linkStep(file: string): string | undefined {
  try {
    const target = readlinkSync(file);
    return path.isAbsolute(target) ? undefined : target.split(/[\\/]/)[0];
  } catch {
    return undefined;
  }
}

function realPath(file: string): string | undefined {
  try {
    return realpathSync(file);
  } catch {
    return undefined;
  }
}

/** `file changed: <file>` or `files changed: <file> (removed), ...`: the reload's trigger, for logs and /readyz. */
export function describeFileChanges(changes: readonly FileChange[]): string {
  const one = (c: FileChange) => (c.what === 'changed' ? c.file : `${c.file} (${c.what})`);
  return `${changes.length === 1 ? 'file' : 'files'} changed: ${changes.map(one).join(', ')}`;
}
