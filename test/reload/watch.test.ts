/**
 * The file watcher on real files in a temporary folder: every way a file changes in place is
 * noticed (a write, an atomic rename, a Kubernetes `..data` swap, an edit through a symlink), and
 * nothing that leaves the content as it was is reported as a change.
 */
import { mkdirSync, mkdtempSync, renameSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { fingerprintOf } from '../../src/config/fingerprint.ts';
import { type FileChange, describeFileChanges, type Watcher, watchFiles } from '../../src/runtime/watch.ts';
import { ProjectedVolume } from '../helpers/k8s-volume.ts';

const DEBOUNCE = 30;
/** Long enough for the events of one step to arrive and be debounced into one check. */
const SETTLE = 250;

let watcher: Watcher | undefined;
afterEach(() => {
  watcher?.close();
  watcher = undefined;
});

const tempDir = () => mkdtempSync(path.join(tmpdir(), 'switchyard-watch-'));

/** Watches `files`, recording every report. */
function record(files: string[], extra: { known?: ReadonlyMap<string, string>; folders?: string[]; folderFilter?: RegExp } = {}) {
  const reports: Array<FileChange[] | 'unchanged'> = [];
  watcher = watchFiles(files, { debounceMs: DEBOUNCE, onChange: (c) => reports.push(c), onUnchanged: () => reports.push('unchanged'), ...extra });
  return reports;
}

/** The watcher takes its baseline asynchronously: let it before changing anything. */
const settle = () => sleep(SETTLE);

describe('watchFiles', () => {
  it('notices a write in place, and not a touch or a rewrite of the same bytes', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'gateway.yaml');
    writeFileSync(file, 'a: 1\n');
    const reports = record([file]);
    await settle();
    writeFileSync(file, 'a: 2\n');
    await settle();
    expect(reports).toEqual([[{ file, what: 'changed' }]]);
    utimesSync(file, new Date(), new Date(Date.now() + 5000));
    writeFileSync(file, 'a: 2\n');
    await settle();
    expect(reports.slice(1)).toEqual(['unchanged']);
  });

  it('ignores other files in the folder (the state file written beside gateway.yaml)', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'gateway.yaml');
    writeFileSync(file, 'a: 1\n');
    const reports = record([file]);
    await settle();
    writeFileSync(path.join(dir, 'switchyard-state.json'), '{}');
    await settle();
    expect(reports).toEqual([]);
    writeFileSync(file, 'a: 2\n');
    await settle();
    expect(reports).toEqual([[{ file, what: 'changed' }]]);
  });

  it('notices an atomic rename over the file (how editors save)', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'gateway.yaml');
    writeFileSync(file, 'a: 1\n');
    const reports = record([file]);
    await settle();
    writeFileSync(path.join(dir, '.gateway.yaml.swp'), 'a: 3\n');
    renameSync(path.join(dir, '.gateway.yaml.swp'), file);
    await settle();
    expect(reports).toEqual([[{ file, what: 'changed' }]]);
  });

  it('notices a Kubernetes ..data swap, and a swap to the same content is no change', async () => {
    const volume = new ProjectedVolume(path.join(tempDir(), 'etc/switchyard'), { 'gateway.yaml': 'a: 1\n' });
    const file = volume.path('gateway.yaml');
    const reports = record([file]);
    await settle();
    volume.update({ 'gateway.yaml': 'a: 2\n' });
    await settle();
    expect(reports).toEqual([[{ file, what: 'changed' }]]);
    expect(volume.folders()).toHaveLength(1); // the old timestamped folder is gone, as the kubelet leaves it

    volume.update({ 'gateway.yaml': 'a: 2\n' });
    await settle();
    expect(reports.slice(1)).toEqual(['unchanged']);

    // Still watching after the folder it resolved to was removed.
    volume.update({ 'gateway.yaml': 'a: 3\n' });
    await settle();
    expect(reports.slice(2)).toEqual([[{ file, what: 'changed' }]]);
  });

  it('notices a key that appears in a Secret volume, and one that is removed', async () => {
    const volume = new ProjectedVolume(path.join(tempDir(), 'secrets'), { 'openai-api-key': 'sk-one' });
    const appears = volume.path('anthropic-api-key');
    const reports = record([volume.path('openai-api-key'), appears]);
    await settle();
    volume.update({ 'openai-api-key': 'sk-one', 'anthropic-api-key': 'sk-two' });
    await settle();
    expect(reports).toEqual([[{ file: appears, what: 'created' }]]);
    volume.update({ 'openai-api-key': 'sk-one' });
    await settle();
    expect(reports.slice(1)).toEqual([[{ file: appears, what: 'removed' }]]);
  });

  it('notices an edit made through a symlink to a file in another folder', async () => {
    const dir = tempDir();
    mkdirSync(path.join(dir, 'real'));
    writeFileSync(path.join(dir, 'real/gateway.yaml'), 'a: 1\n');
    const link = path.join(dir, 'gateway.yaml');
    symlinkSync(path.join(dir, 'real/gateway.yaml'), link);
    const reports = record([link]);
    await settle();
    writeFileSync(path.join(dir, 'real/gateway.yaml'), 'a: 2\n');
    await settle();
    expect(reports).toEqual([[{ file: link, what: 'changed' }]]);
  });

  it('reports at once a file that already differs from what the generation read', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'gateway.yaml');
    writeFileSync(file, 'a: 2\n');
    const reports = record([file], { known: new Map([[file, fingerprintOf(Buffer.from('a: 1\n'))]]) });
    await settle();
    expect(reports).toEqual([[{ file, what: 'changed' }]]);
  });

  it('keeps what it has seen across an update, and takes a new file from what the reload read', async () => {
    const dir = tempDir();
    const config = path.join(dir, 'gateway.yaml');
    const secret = path.join(dir, 'key');
    writeFileSync(config, 'a: 1\n');
    writeFileSync(secret, 'new');
    const reports = record([config]);
    await settle();
    // A reload read `key` as "old"; it is "new" on disk: the watcher says so.
    watcher!.update([config, secret], [], new Map([[secret, fingerprintOf(Buffer.from('old'))]]));
    await settle();
    expect(reports).toEqual([[{ file: secret, what: 'changed' }]]);
  });

  it('adopts what a reload read: a half-written file seen by a check is compared with what serves', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'gateway.yaml');
    writeFileSync(file, 'a: 1\n');
    const reports = record([file]);
    await settle();
    writeFileSync(file, 'a: 2\n');
    await settle();
    expect(reports).toEqual([[{ file, what: 'changed' }]]);
    // The reload read something else than the check (the file was being written): the check after says so.
    watcher!.adopt(new Map([[file, fingerprintOf(Buffer.from('a: 2 (half'))]]));
    await settle();
    expect(reports.slice(1)).toEqual([[{ file, what: 'changed' }]]);
    // And what it read whole is not a change.
    watcher!.adopt(new Map([[file, fingerprintOf(Buffer.from('a: 2\n'))]]));
    await settle();
    expect(reports).toHaveLength(2);
  });

  it('notices a new module in a plugin folder, but not other files there', async () => {
    const dir = tempDir();
    const plugin = path.join(dir, 'plugin.ts');
    writeFileSync(plugin, 'export default 1;\n');
    const reports = record([plugin], { folders: [dir], folderFilter: /\.ts$/ });
    await settle();
    writeFileSync(path.join(dir, 'notes.txt'), 'hello');
    await settle();
    expect(reports).toEqual([]);
    const helper = path.join(dir, 'helper.ts');
    writeFileSync(helper, 'export const x = 1;\n');
    await settle();
    expect(reports).toEqual([[{ file: helper, what: 'created' }]]);
  });

  it('names what changed for the log and /readyz', () => {
    expect(describeFileChanges([{ file: '/etc/switchyard/gateway.yaml', what: 'changed' }])).toBe('file changed: /etc/switchyard/gateway.yaml');
    expect(
      describeFileChanges([
        { file: '/a', what: 'changed' },
        { file: '/b', what: 'removed' },
      ]),
    ).toBe('files changed: /a, /b (removed)');
  });
});
