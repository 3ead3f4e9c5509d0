/**
 * A Node that satisfies package.json's `engines.node`, for the `switchyard` bin and for the npm
 * scripts (scripts/node22.mjs). When the running Node is older, Node 24 LTS is used from
 * ~/.node24, installed there first from the npm registry if needed (the `node` package ships the
 * binary); when that fails too, the caller stops with one line saying what to install.
 *
 * Plain JavaScript (ES2019, no dependencies) so that an old Node can parse it and say what it
 * needs, instead of crashing inside a dependency that uses a newer Node API.
 *
 *   node bin/ensure-node.mjs                  prints the path of a suitable Node (for shell scripts such as .ci/run)
 *   node bin/ensure-node.mjs --after-install  package.json's `prepare` (run by `npm install`): on an old Node,
 *                                             one line saying Node 24 will be used, and installs it now
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));

/** The `engines.node` minimum as [major, minor, patch], e.g. ">=22.19.0" → [22, 19, 0]. */
export const MINIMUM = versionParts(pkg.engines.node);
export const MINIMUM_TEXT = MINIMUM.join('.');
/** Where Node 24 is installed when the machine's Node is too old. */
export const PREFIX = join(homedir(), '.node24');
const PREFIX_NODE = join(PREFIX, 'node_modules', 'node', 'bin', process.platform === 'win32' ? 'node.exe' : 'node');

/** Set on a re-run, so that a Node that still does not fit stops instead of looping. */
const RERUN_MARK = 'SWITCHYARD_NODE_RERUN';
/** Set by runChild to its own pid, for the child to notice when it is gone (see watchLauncher). */
const LAUNCHER_PID = 'SWITCHYARD_LAUNCHER_PID';

export class NodeUnavailable extends Error {}

function versionParts(text) {
  const m = /(\d+)\.(\d+)\.(\d+)/.exec(String(text));
  if (!m) throw new Error(`cannot read a version from "${text}"`);
  return [Number(m[1]), Number(m[2]), Number(m[3])];
}

/** Whether a version such as "22.19.0" or "v20.20.2" satisfies the engines minimum. */
export function satisfies(version) {
  const parts = versionParts(version);
  for (let i = 0; i < 3; i++) if (parts[i] !== MINIMUM[i]) return parts[i] > MINIMUM[i];
  return true;
}

function versionOf(node) {
  try {
    return execFileSync(node, ['-p', 'process.versions.node'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return undefined;
  }
}

/** npm's settings for a flaky registry connection: more retries, and a stall noticed in 2 minutes rather than 5. */
export const NPM_FETCH_FLAGS = ['--fetch-retries=5', '--fetch-retry-mintimeout=5000', '--fetch-retry-maxtimeout=60000', '--fetch-timeout=120000'];

/** Whether npm's output says the registry connection failed (worth another try), not the install itself. */
export function isNetworkFailure(output) {
  return /\b(E(IDLE|RESPONSE|TRANSFER|CONNECTION)TIMEOUT|ECONNRESET|ETIMEDOUT|ECONNREFUSED|EAI_AGAIN|ENOTFOUND|EPIPE|ERR_SOCKET_TIMEOUT|E50[0-4])\b/.test(output);
}

/**
 * The absolute path of a Node binary that satisfies the engines minimum: this process's own when
 * it fits, else ~/.node24's (installed now if missing; `announce` gets the one line that says so).
 * Throws NodeUnavailable with a one-line message otherwise.
 */
export function suitableNode(announce) {
  const rerunning = process.env[RERUN_MARK] !== undefined;
  delete process.env[RERUN_MARK]; // not passed on to the gateway and what it starts
  if (satisfies(process.versions.node)) return process.execPath;
  const needs = `Switchyard needs Node >= ${MINIMUM_TEXT} (this is Node ${process.version})`;
  if (rerunning) throw new NodeUnavailable(`${needs}; install Node 24 LTS from https://nodejs.org and run it again`);
  let version = existsSync(PREFIX_NODE) ? versionOf(PREFIX_NODE) : undefined;
  if (!version || !satisfies(version)) {
    (announce || ((line) => process.stderr.write(`${line}\n`)))(`${needs}: installing Node 24 LTS into ${PREFIX} ...`);
    // npm's own output is shown only when it fails (on stderr: a command's stdout stays clean),
    // so that the line above is all an install says. A connection to the registry that stalls or
    // resets is tried again (the project's .npmrc does not apply under --prefix, so its fetch
    // settings are passed here), then the whole install, twice.
    const args = ['install', '--prefix', PREFIX, 'node@24', '--no-audit', '--no-fund', '--no-update-notifier', '--loglevel=error'].concat(NPM_FETCH_FLAGS);
    for (let attempt = 1; ; attempt++) {
      try {
        execFileSync(process.platform === 'win32' ? 'npm.cmd' : 'npm', args, { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8', shell: process.platform === 'win32' });
        break;
      } catch (err) {
        if (attempt < 3 && isNetworkFailure(`${err.stdout || ''}${err.stderr || ''}`)) continue;
        process.stderr.write(`${err.stdout || ''}${err.stderr || ''}`);
        throw new NodeUnavailable(`${needs} and installing Node 24 into ${PREFIX} failed (${String(err.message).split('\n')[0]}); install Node 24 LTS from https://nodejs.org and run it again`);
      }
    }
    version = versionOf(PREFIX_NODE);
    if (!version || !satisfies(version)) throw new NodeUnavailable(`${needs} and ${PREFIX_NODE} does not run; install Node 24 LTS from https://nodejs.org and run it again`);
  }
  return PREFIX_NODE;
}

/** suitableNode(), or this process ends with its one-line message (exit 1). */
export function suitableNodeOrExit() {
  try {
    return suitableNode();
  } catch (err) {
    if (!(err instanceof NodeUnavailable)) throw err;
    process.stderr.write(`${err.message}\n`);
    process.exit(1);
  }
}

/** Runs a command (vitest, tsc, biome...) as a child, with a suitable Node first on PATH. */
export function runWithSuitableNode(command, args) {
  const node = suitableNodeOrExit();
  const env = Object.assign({}, process.env);
  if (node !== process.execPath) env.PATH = `${dirname(node)}${delimiter}${env.PATH || ''}`;
  runChild(command, args, env);
}

/**
 * Runs `node args...` in place of this process: replaced by it where Node can (process.execve,
 * Node >= 22.15 on POSIX, so no parent lingers), else as a child whose exit code and signals
 * this process passes on.
 */
export function rerun(node, args, env) {
  const childEnv = Object.assign({}, env || process.env);
  childEnv[RERUN_MARK] = '1';
  if (typeof process.execve === 'function') process.execve(node, [node].concat(args), childEnv);
  runChild(node, args, childEnv);
}

/**
 * Runs a command as a child with inherited stdio and exits with its code. SIGTERM and SIGHUP are
 * passed on; SIGINT only when not on a terminal, because Ctrl-C already reaches the whole
 * foreground process group and a second SIGINT would cut the gateway's graceful shutdown short.
 */
export function runChild(command, args, env) {
  const childEnv = Object.assign({}, env || process.env);
  childEnv[LAUNCHER_PID] = String(process.pid);
  const child = spawn(command, args, { stdio: 'inherit', env: childEnv, shell: process.platform === 'win32' && /\.cmd$/i.test(command) });
  const forward = (signal) => () => child.kill(signal);
  process.on('SIGTERM', forward('SIGTERM'));
  if (process.platform !== 'win32') process.on('SIGHUP', forward('SIGHUP'));
  process.on('SIGINT', process.stdin.isTTY ? () => {} : forward('SIGINT'));
  child.on('exit', (code, signal) => process.exit(code === null ? (signal ? 1 : 0) : code));
  child.on('error', (err) => {
    process.stderr.write(`cannot run ${command}: ${err.message}\n`);
    process.exit(1);
  });
}

/**
 * In the process that serves, when a launcher (runChild: an older Node running Node 24, which has
 * no execve to run it in its own place) started it: a launcher killed with SIGKILL cannot pass the
 * signal on, and its gateway would go on serving, an orphan holding the port the next start needs.
 * Once a second the gateway looks whether its parent is still the launcher (an orphan gets another
 * parent) and, when not, shuts down as on SIGTERM: in-flight requests finish. Only the launcher's
 * own child watches (a process that inherited the variable from further up has another parent);
 * the variable is removed, so that the gateway's own children never read it. A pipe to the
 * launcher would say it sooner, but Node's execve (the bin's re-run with its V8 flags) closes it.
 */
export function watchLauncher() {
  const launcher = Number(process.env[LAUNCHER_PID]);
  delete process.env[LAUNCHER_PID];
  if (process.platform === 'win32' || launcher !== process.ppid) return;
  const timer = setInterval(() => {
    if (process.ppid === launcher) return;
    clearInterval(timer);
    process.kill(process.pid, 'SIGTERM');
  }, 1000);
  // Watching does not keep the process alive.
  timer.unref();
}

/**
 * After `npm install` (package.json's `prepare`; .npmrc keeps npm's engine warnings out): on a Node
 * that fits, nothing; else one line on stdout saying that Node 24 from ~/.node24 is used, installed
 * now (before that line's end is reached) so that `npm start` starts at once. A failed install is
 * that one line too, not an install failure: the dependencies are in place, `npm start` tries again.
 */
function afterInstall() {
  if (satisfies(process.versions.node)) return;
  const uses = 'npm start, npm test and the switchyard bin';
  const say = (line) => process.stdout.write(`${line}\n`);
  let announced = false;
  try {
    suitableNode((installing) => {
      announced = true;
      say(`${installing.replace(/ \.\.\.$/, '')} for ${uses}`);
    });
    if (!announced) say(`Switchyard needs Node >= ${MINIMUM_TEXT} (this is Node ${process.version}): ${uses} use Node 24 LTS from ${PREFIX}`);
  } catch (err) {
    if (!(err instanceof NodeUnavailable)) throw err;
    say(err.message);
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (process.argv[2] === '--after-install') afterInstall();
  else {
    try {
      process.stdout.write(`${suitableNode()}\n`);
    } catch (err) {
      if (!(err instanceof NodeUnavailable)) throw err;
      process.stderr.write(`${err.message}\n`);
      process.exit(1);
    }
  }
}
