/**
 * The steps of installing this package outside the repository, shared by the package test
 * (test/package/pack.test.ts) and the image's entrypoint test (test/deploy): run a command as a
 * named step, `npm pack` with its report, and lockfile entries that `npm ci --offline` installs
 * from the npm cache alone.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './repo.ts';

export interface LockEntry {
  name?: string;
  version?: string;
  resolved?: string;
  dev?: boolean;
  [field: string]: unknown;
}

export interface Lockfile {
  name?: string;
  lockfileVersion: number;
  packages: Record<string, LockEntry>;
  [field: string]: unknown;
}

/** Runs a command to completion; a failure says which step failed and shows its output. */
export function step(what: string, command: string, args: string[], cwd: string): string {
  const r = spawnSync(command, args, { cwd, encoding: 'utf8', env: { ...process.env, npm_config_update_notifier: 'false' }, shell: process.platform === 'win32' });
  if (r.error) throw new Error(`${what}: cannot run ${command}: ${r.error.message}`);
  if (r.status !== 0) throw new Error(`${what} failed (${command} ${args.join(' ')}, exit ${r.status}):\n${(r.stdout + r.stderr).trim().split('\n').slice(-25).join('\n')}`);
  return r.stdout;
}

/** `npm pack --json` of the package in `cwd` into `dest`; extra args such as --ignore-scripts. Returns the tarball's name and the files in it. */
export function npmPack(what: string, cwd: string, dest: string, extra: string[] = []): { tarball: string; files: string[] } {
  const out = step(what, 'npm', ['pack', '--json', ...extra, '--pack-destination', dest], cwd);
  // Lifecycle scripts print before the JSON report.
  const report = JSON.parse(out.slice(out.search(/^\[/m))) as Array<{ filename: string; files: Array<{ path: string }> }>;
  return { tarball: report[0].filename, files: report[0].files.map((f) => f.path) };
}

/** The repository's package-lock.json. */
export function repositoryLock(): Lockfile {
  return JSON.parse(readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8')) as Lockfile;
}

/**
 * The repository's installed-package entries that `keep` accepts, each with its registry tarball
 * URL (the repository's lockfile records none), so that `npm ci --offline` needs no registry
 * metadata: the npm cache that the repository's own `npm ci` filled holds the tarballs by integrity.
 */
export function lockEntriesWithUrls(keep: (where: string, entry: LockEntry) => boolean = () => true): Record<string, LockEntry> {
  const registry = step('reading the npm registry setting', 'npm', ['config', 'get', 'registry'], ROOT).trim().replace(/\/?$/, '/');
  const entries: Record<string, LockEntry> = {};
  for (const [where, entry] of Object.entries(repositoryLock().packages)) {
    if (!where.startsWith('node_modules/') || !keep(where, entry)) continue;
    const name = entry.name ?? where.slice(where.lastIndexOf('node_modules/') + 'node_modules/'.length);
    entries[where] = { ...entry, resolved: entry.resolved ?? `${registry}${name}/-/${name.split('/').pop()}-${entry.version}.tgz` };
  }
  return entries;
}
