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

const PACKAGE = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string>; engines: { node: string } };
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
    for (const name of ['redis-server', 'promtool', 'prometheus', 'initdb', 'pg_ctl']) program(path.join(bin, name));
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
    expect(lines[0]).toContain('redis-server, chromium, prometheus (promtool, prometheus), postgresql (initdb, pg_ctl)');
    expect(lines[1]).toBe('  Debian/Ubuntu: sudo apt-get install -y redis-server chromium prometheus postgresql');
    expect(lines[2]).toBe('  Fedora:        sudo dnf install -y redis chromium golang-github-prometheus postgresql-server, then export CHROMIUM_PATH=/usr/bin/chromium-browser');
    expect(lines[3]).toBe('  macOS:         brew install redis prometheus postgresql && brew install --cask chromium, then export CHROMIUM_PATH=/Applications/Chromium.app/Contents/MacOS/Chromium');

    const redisOnly = installMessage(all.filter((m) => m.service.name === 'redis-server')).split('\n');
    expect(redisOnly.slice(1)).toEqual(['  Debian/Ubuntu: sudo apt-get install -y redis-server', '  Fedora:        sudo dnf install -y redis', '  macOS:         brew install redis']);
  });

  it('is what `npm test` runs, passing its arguments on to vitest', () => {
    expect(PACKAGE.scripts.test).toBe('node scripts/test.mjs');
    // A filter that matches no file: vitest says so and ends (running this file again would recurse).
    const env = { ...process.env, PATH: `${path.join(ROOT, 'node_modules', '.bin')}${path.delimiter}${process.env.PATH}` };
    const run = spawnSync(process.execPath, ['scripts/test.mjs', 'no-such-test-file-4711', '--passWithNoTests'], { cwd: ROOT, encoding: 'utf8', env });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout + run.stderr).toMatch(/No test files found[\s\S]*no-such-test-file-4711/);
  });
});

describe("npm install's one line (prepare: bin/ensure-node.mjs --after-install)", () => {
  /** Runs it under this Node made to look like `version`, with HOME (where ~/.node24 is) at `home`. */
  function afterInstall(version: string | undefined, home: string, pathFirst?: string) {
    const pretend =
      version &&
      `data:text/javascript,${encodeURIComponent(`Object.defineProperty(process,'version',{value:'v${version}'});Object.defineProperty(process,'versions',{value:{...process.versions,node:'${version}'}});`)}`;
    const args = [...(pretend ? ['--import', pretend] : []), 'bin/ensure-node.mjs', '--after-install'];
    const PATH = pathFirst ? `${pathFirst}${path.delimiter}${process.env.PATH}` : process.env.PATH;
    return spawnSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8', env: { ...process.env, HOME: home, PATH } });
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
    expect(PACKAGE.scripts.prepare).toBe('node bin/ensure-node.mjs --after-install');
    expect(run.stdout).toBe(
      `Switchyard needs Node ${PACKAGE.engines.node.replace('>=', '>= ')} (this is Node v20.1.0): npm start, npm test and the switchyard bin use Node 24 LTS from ${path.join(home, '.node24')}\n`,
    );
  });

  it("says when installing Node 24 fails, with npm's own output, and leaves npm install's result alone", () => {
    const home = path.join(dir, 'home-empty');
    mkdirSync(home, { recursive: true });
    const bin = path.join(dir, 'failing-npm');
    mkdirSync(bin, { recursive: true });
    writeFileSync(path.join(bin, 'npm'), "#!/bin/sh\necho 'npm error code E404 (the registry said no)' >&2\nexit 1\n");
    chmodSync(path.join(bin, 'npm'), 0o755);
    const run = afterInstall('20.1.0', home, bin);
    expect(run.status).toBe(0);
    expect(run.stderr).toContain('npm error code E404 (the registry said no)');
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toContain(`installing Node 24 LTS into ${path.join(home, '.node24')} for npm start, npm test and the switchyard bin`);
    expect(lines[1]).toMatch(/installing Node 24 into .* failed .*; install Node 24 LTS from https:\/\/nodejs\.org and run it again$/);
  });

  it('tries the install again when the registry connection fails, three times in all, and only then', () => {
    const attempts = (failure: string, name: string) => {
      const home = path.join(dir, `home-${name}`);
      mkdirSync(home, { recursive: true });
      const bin = path.join(dir, `npm-${name}`);
      const count = path.join(dir, `${name}.count`);
      mkdirSync(bin, { recursive: true });
      writeFileSync(path.join(bin, 'npm'), `#!/bin/sh\necho x >> '${count}'\necho 'npm error code ${failure}' >&2\nexit 1\n`);
      chmodSync(path.join(bin, 'npm'), 0o755);
      const run = afterInstall('20.1.0', home, bin);
      expect(run.stderr).toContain(`npm error code ${failure}`);
      return readFileSync(count, 'utf8').trim().split('\n').length;
    };
    expect(attempts('EIDLETIMEOUT', 'stalled')).toBe(3);
    expect(attempts('ECONNRESET', 'reset')).toBe(3);
    expect(attempts('E404', 'refused')).toBe(1);
  });
});
