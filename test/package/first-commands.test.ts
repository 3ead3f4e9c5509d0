/**
 * What makes the README's two commands work on any machine, short of running them (.ci/run does,
 * under the machine's own Node): `npm test`'s check for the system programs the suites start
 * (scripts/test-services.mjs), and `npm install`'s one line on an old Node
 * (bin/ensure-node.mjs --after-install, package.json's `prepare`).
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decide, installMessage, missingServices, SERVICES } from '../../scripts/test-services.mjs';
import { ROOT } from '../helpers/repo.ts';

let dir: string;

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'switchyard-first-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** An executable file that prints `output` (a stand-in for a program the check looks for). */
function program(file: string, output = ''): string {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `#!/bin/sh\necho '${output}'\n`);
  chmodSync(file, 0o755);
  return file;
}

describe("npm test's system programs", () => {
  it('finds each program where its tests look: PATH, and CHROMIUM_PATH for the browser', () => {
    const bin = path.join(dir, 'bin');
    for (const name of ['redis-server', 'promtool', 'prometheus']) program(path.join(bin, name));
    const chromium = program(path.join(dir, 'browsers', 'chromium'));
    expect(missingServices({ PATH: bin, CHROMIUM_PATH: chromium })).toEqual([]);

    const empty = path.join(dir, 'empty');
    mkdirSync(empty, { recursive: true });
    const missing = missingServices({ PATH: empty, CHROMIUM_PATH: path.join(dir, 'no-chromium') });
    expect(missing.map((m) => m.service.name)).toEqual(expect.arrayContaining(['redis-server', 'chromium']));
    expect(missing.find((m) => m.service.name === 'chromium')?.programs).toEqual(['chromium']);
  });

  it('installs only for the whole suite as root with apt-get, warns for named files, else stops', () => {
    const missing = missingServices({ PATH: '', CHROMIUM_PATH: path.join(dir, 'no-chromium') });
    expect(decide({ missing: [], wholeSuite: true, root: false, hasApt: false })).toBe('run');
    expect(decide({ missing: [], wholeSuite: false, root: true, hasApt: true })).toBe('run');
    expect(decide({ missing, wholeSuite: true, root: true, hasApt: true })).toBe('install');
    expect(decide({ missing, wholeSuite: true, root: false, hasApt: true })).toBe('fail');
    expect(decide({ missing, wholeSuite: true, root: true, hasApt: false })).toBe('fail');
    expect(decide({ missing, wholeSuite: false, root: true, hasApt: true })).toBe('warn');
  });

  it('says in one message what to install on Debian/Ubuntu, Fedora and macOS', () => {
    const all = SERVICES.map((service) => ({ service, programs: Object.keys(service.programs) }));
    const lines = installMessage(all).split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[0]).toContain('redis-server, chromium, prometheus (promtool, prometheus)');
    expect(lines[1]).toBe('  Debian/Ubuntu: sudo apt-get install -y redis-server chromium prometheus');
    expect(lines[2]).toBe('  Fedora:        sudo dnf install -y redis chromium golang-github-prometheus, then export CHROMIUM_PATH=/usr/bin/chromium-browser');
    expect(lines[3]).toBe('  macOS:         brew install redis prometheus && brew install --cask chromium, then export CHROMIUM_PATH=/Applications/Chromium.app/Contents/MacOS/Chromium');

    const redisOnly = installMessage(all.filter((m) => m.service.name === 'redis-server')).split('\n');
    expect(redisOnly.slice(1)).toEqual(['  Debian/Ubuntu: sudo apt-get install -y redis-server', '  Fedora:        sudo dnf install -y redis', '  macOS:         brew install redis']);
  });

  it('is what `npm test` runs, passing its arguments on to vitest', () => {
    const scripts = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    expect(scripts.test).toBe('node scripts/test.mjs');
    // A filter that matches no file: vitest says so and ends (running this file again would recurse).
    const env = { ...process.env, PATH: `${path.join(ROOT, 'node_modules', '.bin')}${path.delimiter}${process.env.PATH}` };
    const run = spawnSync(process.execPath, ['scripts/test.mjs', 'no-such-test-file-4711', '--passWithNoTests'], { cwd: ROOT, encoding: 'utf8', env });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout + run.stderr).toMatch(/No test files found[\s\S]*no-such-test-file-4711/);
  });
});

describe("npm install's one line (prepare: bin/ensure-node.mjs --after-install)", () => {
  /** Runs it under this Node made to look like `version`, with HOME (where ~/.node24 is) at `home`. */
  function afterInstall(version: string | undefined, home: string) {
    const pretend =
      version &&
      `data:text/javascript,${encodeURIComponent(`Object.defineProperty(process,'version',{value:'v${version}'});Object.defineProperty(process,'versions',{value:{...process.versions,node:'${version}'}});`)}`;
    const args = [...(pretend ? ['--import', pretend] : []), 'bin/ensure-node.mjs', '--after-install'];
    return spawnSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8', env: { ...process.env, HOME: home } });
  }

  it('prints nothing on a Node that fits', () => {
    const run = afterInstall(undefined, path.join(dir, 'home-none'));
    expect(run.status).toBe(0);
    expect(run.stdout + run.stderr).toBe('');
  });

  it('prints one line on an old Node saying that Node 24 from ~/.node24 is used', () => {
    const home = path.join(dir, 'home-with-node24');
    program(path.join(home, '.node24', 'node_modules', 'node', 'bin', 'node'), '24.11.1');
    const run = afterInstall('20.1.0', home);
    expect(run.status).toBe(0);
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe(`Switchyard needs Node >= 22.19.0 (this is Node v20.1.0): npm start, npm test and the switchyard bin use Node 24 LTS from ${path.join(home, '.node24')}\n`);
  });
});
