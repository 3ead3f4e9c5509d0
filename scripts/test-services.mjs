/**
 * The system programs the test suites start, in one list, and `npm test`'s check for them
 * (scripts/test.mjs) before vitest: present, nothing happens; missing on a Debian machine as root,
 * apt-get installs them; missing otherwise, one message says what to install on Debian/Ubuntu,
 * Fedora and macOS, and the whole suite does not start (a run of named test files only warns: it
 * may not need them). A service a new suite needs is one more entry below.
 *
 * Each entry finds its programs where its tests look for them (the comment names the helper that
 * starts them). Plain JavaScript: it runs before the bootstrap to Node 24, so it fails at once.
 * (PostgreSQL: Debian keeps initdb and pg_ctl in /usr/lib/postgresql/<version>/bin, off PATH, so
 * its finder looks there, after $PG_BIN, as test/helpers/postgres.ts does.)
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { NPM_FETCH_FLAGS } from '../bin/ensure-node.mjs';

/** A program found on PATH (then in `extraDirs`), as spawn('name') or a PATH walk finds it. */
function onPath(name, extraDirs) {
  return (env) => {
    const dirs = (env.PATH || '').split(delimiter).concat(extraDirs || []);
    for (const dir of dirs) if (dir && existsSync(join(dir, name))) return join(dir, name);
    return undefined;
  };
}

/** A program at a path an environment variable may override. */
function atPath(variable, fallback) {
  return (env) => {
    const file = env[variable] || fallback;
    return existsSync(file) ? file : undefined;
  };
}

/** A PostgreSQL program in $PG_BIN, Debian's /usr/lib/postgresql/<version>/bin, then PATH. */
function postgresProgram(name) {
  return (env) => {
    const debian = '/usr/lib/postgresql';
    const versions = existsSync(debian) ? readdirSync(debian).filter((v) => /^\d+$/.test(v)) : [];
    const dirs = [env.PG_BIN, ...versions.map((v) => join(debian, v, 'bin'))].filter(Boolean);
    for (const dir of dirs) if (existsSync(join(dir, name))) return join(dir, name);
    return onPath(name)(env);
  };
}

export const SERVICES = [
  {
    // src/governance/testing/redis-server.ts spawns redis-server from PATH.
    name: 'redis-server',
    programs: { 'redis-server': onPath('redis-server') },
    install: { debian: 'redis-server', fedora: 'redis', brew: 'redis' },
  },
  {
    // test/console/browser.test.ts launches $CHROMIUM_PATH, else /usr/bin/chromium.
    name: 'chromium',
    programs: { chromium: atPath('CHROMIUM_PATH', '/usr/bin/chromium') },
    install: { debian: 'chromium', fedora: 'chromium', brew: '--cask chromium' },
    // Where the other systems put it: the message says to set the variable.
    elsewhere: { variable: 'CHROMIUM_PATH', fedora: '/usr/bin/chromium-browser', brew: '/Applications/Chromium.app/Contents/MacOS/Chromium' },
  },
  {
    // test/observability/helpers.ts runs promtool from PATH or /usr/bin; the Prometheus server
    // (the PromQL examples' tests) is looked for the same way.
    name: 'prometheus',
    programs: { promtool: onPath('promtool', ['/usr/bin']), prometheus: onPath('prometheus', ['/usr/bin']) },
    install: { debian: 'prometheus', fedora: 'golang-github-prometheus', brew: 'prometheus' },
  },
  {
    // test/helpers/postgres.ts runs initdb and pg_ctl (the request ledger's PostgreSQL tests).
    name: 'postgresql',
    programs: { initdb: postgresProgram('initdb'), pg_ctl: postgresProgram('pg_ctl') },
    install: { debian: 'postgresql', fedora: 'postgresql-server', brew: 'postgresql' },
  },
];

/** The services with a program that cannot be found, each with the names of those programs. */
export function missingServices(env, services) {
  const missing = [];
  for (const service of services || SERVICES) {
    const programs = Object.keys(service.programs).filter((program) => !service.programs[program](env));
    if (programs.length > 0) missing.push({ service, programs });
  }
  return missing;
}

/**
 * What `npm test` does about the missing services: 'run' (none missing), 'install' (apt-get, as
 * root on Debian and for the whole suite only), 'warn' (named test files: they may not need them)
 * or 'fail'.
 */
export function decide({ missing, wholeSuite, root, hasApt }) {
  if (missing.length === 0) return 'run';
  if (!wholeSuite) return 'warn';
  return root && hasApt ? 'install' : 'fail';
}

/** The one message: what is missing, and the commands that install it on each system. */
export function installMessage(missing) {
  const names = missing.map((m) => (m.programs.length === 1 && m.programs[0] === m.service.name ? m.service.name : `${m.service.name} (${m.programs.join(', ')})`));
  const services = missing.map((m) => m.service);
  const debian = services.map((s) => s.install.debian).join(' ');
  const fedora = services.map((s) => s.install.fedora).join(' ');
  const formulas = services.filter((s) => !s.install.brew.startsWith('--cask')).map((s) => s.install.brew);
  const casks = services.filter((s) => s.install.brew.startsWith('--cask')).map((s) => s.install.brew.replace('--cask ', ''));
  const brew = [formulas.length ? `brew install ${formulas.join(' ')}` : '', casks.length ? `brew install --cask ${casks.join(' ')}` : ''].filter(Boolean).join(' && ');
  const pathNote = (system) =>
    services
      .filter((s) => s.elsewhere?.[system])
      .map((s) => `, then export ${s.elsewhere.variable}=${s.elsewhere[system]}`)
      .join('');
  return [
    `The test suites need programs this machine does not have: ${names.join(', ')}. Install them and run npm test again (as root on Debian/Ubuntu, npm test installs them itself):`,
    `  Debian/Ubuntu: sudo apt-get install -y ${debian}`,
    `  Fedora:        sudo dnf install -y ${fedora}${pathNote('fedora')}`,
    `  macOS:         ${brew}${pathNote('brew')}`,
  ].join('\n');
}

/** apt-get update, then install; false (with apt's output shown) when either fails or times out. */
function aptInstall(packages) {
  const env = Object.assign({}, process.env, { DEBIAN_FRONTEND: 'noninteractive' });
  // Acquire::Retries: a mirror's dropped connection is retried by apt itself.
  const steps = [['-o', 'Acquire::Retries=3', 'update'], ['-o', 'Acquire::Retries=3', 'install', '-y'].concat(packages)];
  for (const args of steps) {
    process.stderr.write(`npm test: apt-get ${args.join(' ')}\n`);
    // stdout to stderr: apt's progress is not the tests' output.
    const run = spawnSync('apt-get', args, { env, stdio: ['ignore', 2, 2], timeout: 1200000 });
    if (run.status !== 0) return false;
  }
  return true;
}

/**
 * Makes sure the services are there before the tests start, as the module comment says; exits
 * the process when they are missing and cannot be installed.
 */
export function ensureServices({ wholeSuite }) {
  let missing = missingServices(process.env);
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  const action = decide({ missing, wholeSuite, root, hasApt: Boolean(onPath('apt-get')(process.env)) });
  if (action === 'run') return;
  if (action === 'warn') {
    const names = missing.map((m) => m.service.name).join(', ');
    process.stderr.write(`npm test: not installed: ${names}; the tests that start it fail (\`npm test\` with no file names installs it as root, or says how)\n`);
    return;
  }
  if (action === 'install') {
    const packages = missing.map((m) => m.service.install.debian);
    if (aptInstall(packages)) missing = missingServices(process.env);
    if (missing.length === 0) return;
    process.stderr.write(`npm test: apt-get did not provide everything (${packages.join(' ')}).\n`);
  }
  process.stderr.write(`${installMessage(missing)}\n`);
  process.exit(1);
}

/**
 * The coding-agent CLIs test/agents drives (Claude Code, Codex, Gemini CLI, opencode): npm
 * packages pinned in test/agents/package.json with their own lockfile, apart from the project's
 * dependencies (over a gigabyte of platform binaries a user's `npm install` should not fetch).
 * Installed there when one is missing or not at its pinned version; install scripts stay off (the
 * binaries come in the platform packages and run without them). No lockfile: the pins are exact
 * down to each platform build, and `npm ci` refuses a lockfile that lacks other platforms' builds
 * when the registry in use does not carry them (opencode's, on some mirrors).
 */
const AGENTS_DIR = new URL('../test/agents/', import.meta.url);

/** The pinned packages of test/agents whose installed version differs (or that are missing). */
export function staleAgentClients(dir = AGENTS_DIR) {
  const pins = JSON.parse(readFileSync(new URL('package.json', dir), 'utf8')).dependencies;
  return Object.keys(pins).filter((name) => {
    try {
      return JSON.parse(readFileSync(new URL(`node_modules/${name}/package.json`, dir), 'utf8')).version !== pins[name];
    } catch {
      return true;
    }
  });
}

// The install skips lifecycle scripts; these two postinstalls only copy the native binary
// npm already fetched as an optional dependency into place (no download), so they run here.
const AGENT_POSTINSTALLS = [
  ['@anthropic-ai/claude-code', 'install.cjs'],
  ['opencode-ai', 'postinstall.mjs'],
];

/** Runs the binary-placing postinstalls; false when one fails. */
function linkAgentBinaries() {
  for (const [pkg, script] of AGENT_POSTINSTALLS) {
    const dir = new URL(`../test/agents/node_modules/${pkg}/`, import.meta.url);
    const run = spawnSync(process.execPath, [script], { cwd: dir, stdio: ['ignore', 2, 2], timeout: 120000 });
    if (run.status !== 0) {
      process.stderr.write(`npm test: ${pkg}/${script} failed (status ${run.status})\n`);
      return false;
    }
  }
  return true;
}

/** Installs the agent CLIs when `wanted` (the whole suite, or files under test/agents) and stale; exits with one message if it cannot. */
export function ensureAgentClients({ wanted }) {
  if (!wanted) return;
  const stale = staleAgentClients();
  if (stale.length === 0) return;
  process.stderr.write(`npm test: installing the pinned agent CLIs in test/agents (${stale.join(', ')})\n`);
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  // A stalled or reset registry connection fails an install now and then: the whole install is
  // tried three times (npm keeps what it already fetched in its cache).
  for (let attempt = 1; attempt <= 3; attempt++) {
    if (attempt > 1) process.stderr.write(`npm test: the agent CLIs' install failed; trying again (${attempt} of 3)\n`);
    const run = spawnSync(npm, ['install', '--prefix', 'test/agents', '--no-package-lock', '--ignore-scripts', '--no-audit', '--no-fund'].concat(NPM_FETCH_FLAGS), {
      cwd: new URL('..', import.meta.url),
      stdio: ['ignore', 2, 2],
      timeout: 900000,
    });
    if (run.status === 0 && staleAgentClients().length === 0) break;
  }
  if (staleAgentClients().length === 0 && linkAgentBinaries()) return;
  process.stderr.write(
    `npm test: could not install the agent CLIs test/agents/agents.test.ts runs (${stale.join(', ')}): \`npm install --prefix test/agents --no-package-lock --ignore-scripts\` failed. It needs the npm registry once; run it by hand to see why.\n`,
  );
  process.exit(1);
}
