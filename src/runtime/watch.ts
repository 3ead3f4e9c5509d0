/**
 * Watches files for changes, debounced. Directories are watched rather than the files, since
 * editors often save by writing a new file and renaming it over the old one.
 */
import { watch, type FSWatcher } from 'node:fs';
import path from 'node:path';

export interface Watcher {
  close(): void;
}

/**
 * `files` are watched by name; in each of `folders`, also every file `folderFilter` accepts (a
 * plugin's sibling modules).
 */
export function watchFiles(files: readonly string[], onChange: (file: string) => void, debounceMs = 100, folders: readonly string[] = [], folderFilter: RegExp = /./): Watcher {
  const byDir = new Map<string, { names: Set<string>; anySource: boolean }>();
  const entry = (dir: string) => {
    let e = byDir.get(dir);
    if (!e) byDir.set(dir, (e = { names: new Set(), anySource: false }));
    return e;
  };
  for (const dir of folders) entry(dir).anySource = true;
  for (const file of files) entry(path.dirname(file)).names.add(path.basename(file));

  let timer: NodeJS.Timeout | undefined;
  const watchers: FSWatcher[] = [];
  for (const [dir, { names, anySource }] of byDir) {
    try {
      const w = watch(dir, (_event, name) => {
        const file = name?.toString();
        if (!file || !(names.has(file) || (anySource && folderFilter.test(file)))) return;
        clearTimeout(timer);
        timer = setTimeout(() => onChange(path.join(dir, file)), debounceMs);
      });
      w.on('error', () => undefined);
      watchers.push(w);
    } catch {
      // A directory that vanished cannot be watched; the next successful reload re-arms.
    }
  }
  return {
    close() {
      clearTimeout(timer);
      for (const w of watchers) w.close();
    },
  };
}
