/**
 * Watches files for changes, debounced. Directories are watched rather than the files, since
 * editors often save by writing a new file and renaming it over the old one.
 */
import { watch, type FSWatcher } from 'node:fs';
import path from 'node:path';

export interface Watcher {
  close(): void;
}

export function watchFiles(files: readonly string[], onChange: (file: string) => void, debounceMs = 100): Watcher {
  const byDir = new Map<string, Set<string>>();
  for (const file of files) {
    const dir = path.dirname(file);
    if (!byDir.has(dir)) byDir.set(dir, new Set());
    byDir.get(dir)!.add(path.basename(file));
  }
  let timer: NodeJS.Timeout | undefined;
  let changed = '';
  const watchers: FSWatcher[] = [];
  for (const [dir, names] of byDir) {
    try {
      const w = watch(dir, (_event, name) => {
        if (!name || !names.has(name.toString())) return;
        changed = path.join(dir, name.toString());
        clearTimeout(timer);
        timer = setTimeout(() => onChange(changed), debounceMs);
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
