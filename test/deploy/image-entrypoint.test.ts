/**
 * The image's command, run as the Dockerfile would run it, without Docker (these machines have no
 * engine, so the image itself is never built here): the build context cut by .dockerignore, the
 * build stage's `npm run build` and `npm pack`, the runtime stage's `npm ci` (offline, from the
 * npm cache) beside the unpacked package, then ENTRYPOINT + CMD from that clean directory with
 * only the image's environment, as PID 1 of a PID namespace of its own (`unshare`, as root), the
 * way a container runs it: PID 1 gets only the signals it handles. Its /tmp is an empty folder of
 * the test's (a mount namespace of its own), to see what lands there. The image's paths (/app,
 * /etc/switchyard, /var/lib/switchyard) map to temporary folders, and `--host 0.0.0.0` to
 * 127.0.0.1 (tests listen on loopback only); nothing else is changed.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { K8S_LAYOUT } from '../helpers/k8s-layout.ts';
import { lockEntriesWithUrls, npmPack, repositoryLock, step } from '../helpers/npm-package.ts';
import { ROOT } from '../helpers/repo.ts';
import { dockerignored, last, readDockerfile, readDockerignore, runCommands } from './dockerfile.ts';
import { DOCKERFILE, envOf, imageCommand, runtimeStage } from './image.ts';

const stage = runtimeStage();
const WORKDIR = last(stage, 'WORKDIR').text;

let root: string;
let app: string;
/** `unshare`, which waits for the gateway and exits with its status. */
let namespace: ChildProcess | undefined;
/** The gateway's PID as seen from here (it is 1 in its namespace). */
let gatewayPid: number | undefined;
let output = '';
let exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

/** An image path in the temporary tree; `--host 0.0.0.0` becomes loopback. */
function mapped(arg: string): string {
  if (arg === '0.0.0.0') return '127.0.0.1';
  for (const dir of [WORKDIR, K8S_LAYOUT.configDir, K8S_LAYOUT.stateDir]) {
    if (arg === dir || arg.startsWith(`${dir}/`)) return path.join(root, arg);
  }
  return arg;
}

/** The image's `node` is this Node (24, as the base image's). */
function runnable(command: string[]): [string, string[]] {
  if (command[0] !== 'node') throw new Error(`the command runs ${command[0]}, not node`);
  return [process.execPath, command.slice(1).map(mapped)];
}

/** Only what the container has: the image's ENV and a PATH with this Node. */
function imageEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { PATH: `${path.dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`, HOME: path.join(root, 'home'), ...envOf(stage), ...extra };
}

/** Every file under a folder with its size and modification time, to see that nothing was written there. */
function snapshot(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => {
      const full = path.join(e.parentPath, e.name);
      const s = statSync(full);
      return `${path.relative(dir, full)} ${s.size} ${s.mtimeMs}`;
    })
    .sort();
}

function healthcheck(url: string): number | null {
  const check = last(stage, 'HEALTHCHECK').exec;
  if (!check) throw new Error('HEALTHCHECK must be in exec form');
  const [command, args] = runnable(check);
  return spawnSync(command, args, { env: imageEnv({ SWITCHYARD_HEALTHCHECK_URL: url }), timeout: 10_000 }).status;
}

describe('the image entrypoint, run from a clean directory as the Dockerfile builds it', () => {
  let appFilesBefore: string[];
  let configFilesBefore: string[];
  let url: string | undefined;

  beforeAll(async () => {
    // Not under /tmp, which the command gets a folder of its own for.
    root = mkdtempSync(path.join('/var/tmp', 'switchyard-image-'));
    const [build] = readDockerfile(DOCKERFILE).stages;

    // The build context: the repository less what .dockerignore leaves out.
    const context = path.join(root, 'context');
    const ignore = readDockerignore(path.join(ROOT, '.dockerignore'));
    cpSync(ROOT, context, { recursive: true, filter: (src) => src === ROOT || !dockerignored(path.relative(ROOT, src).split(path.sep).join('/'), ignore) });
    expect(existsSync(path.join(context, 'node_modules')), '.dockerignore must leave node_modules out').toBe(false);
    // The build stage's `npm ci` installs the repository's lockfile: the repository's own node_modules stands for it.
    symlinkSync(path.join(ROOT, 'node_modules'), path.join(context, 'node_modules'));
    const buildRuns = runCommands(build).map((c) => c.join(' '));
    expect(buildRuns).toContain('npm run build');
    const pack = buildRuns.find((c) => c.startsWith('npm pack'));
    expect(pack, 'the build stage packs the package').toMatch(/--ignore-scripts/);
    step('the build stage: npm run build (from the context .dockerignore leaves)', 'npm', ['run', 'build'], context);
    const { tarball } = npmPack('the build stage: npm pack --ignore-scripts', context, root, ['--ignore-scripts']);

    // The runtime stage: package.json and the lockfile, `npm ci` as the Dockerfile runs it (offline), then the package's files.
    app = path.join(root, WORKDIR);
    mkdirSync(app, { recursive: true });
    cpSync(path.join(ROOT, 'package.json'), path.join(app, 'package.json'));
    writeFileSync(path.join(app, 'package-lock.json'), JSON.stringify({ ...repositoryLock(), packages: { ...repositoryLock().packages, ...lockEntriesWithUrls() } }, null, 2));
    const install = runCommands(stage).find((c) => c[0] === 'npm' && c[1] === 'ci');
    expect(install, 'the runtime stage runs npm ci').toBeDefined();
    expect(install).toContain('--omit=dev');
    step('the runtime stage: npm ci --omit=dev (offline, from the npm cache)', 'npm', [...install!.slice(1), '--offline'], app);
    step('unpacking the package over it (COPY --from=build /pkg/package/)', 'tar', ['-xzf', path.join(root, tarball), '--strip-components=1', '-C', app], root);
    for (const dir of [K8S_LAYOUT.configDir, K8S_LAYOUT.stateDir, '/home', '/tmp']) mkdirSync(path.join(root, dir), { recursive: true });

    writeFileSync(
      path.join(root, K8S_LAYOUT.configDir, K8S_LAYOUT.configFile),
      [
        'server: { port: 0, shutdownGraceMs: 5000 }',
        'log: { level: info, format: json }',
        'keys: [{ name: dev, key: sk-image-test-123456 }]',
        'providers: { mock: { plugin: mock } }',
        'models: { demo: { targets: [{ provider: mock, model: mock-1 }] } }',
        `state: { backend: memory, file: ${path.join(root, K8S_LAYOUT.stateDir, 'switchyard-state.sqlite')} }`,
        '',
      ].join('\n'),
    );
    appFilesBefore = snapshot(app);
    configFilesBefore = snapshot(path.join(root, K8S_LAYOUT.configDir));

    const [command, args] = runnable(imageCommand(stage));
    // sh only mounts the test's /tmp, then is replaced by the command (exec): the command is PID 1.
    const mountTmp = 'mount --bind "$0" /tmp && exec "$@"';
    const child = spawn('unshare', ['--pid', '--fork', '--kill-child', '--mount', '--propagation', 'private', 'sh', '-c', mountTmp, path.join(root, 'tmp'), command, ...args], {
      cwd: app,
      env: imageEnv(),
    });
    namespace = child;
    child.on('error', (err) => (output += `cannot run unshare (util-linux; needs root): ${err.message}\n`));
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    // 'close', not 'exit': the last lines (flushed as the process exits) may still be in the pipe at 'exit'.
    exit = new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
    let exited = false;
    void exit.then(() => (exited = true));
    for (const deadline = Date.now() + 30_000; !url && !exited && Date.now() < deadline; await new Promise((r) => setTimeout(r, 50))) {
      url = /Switchyard listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1];
    }
    if (url) gatewayPid = Number(readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').trim());
  }, 600_000);

  afterAll(() => {
    if (namespace?.exitCode === null) namespace.kill('SIGKILL'); // --kill-child: the gateway goes with it
    if (root) rmSync(root, { recursive: true, force: true });
  }, 60_000);

  it('installs production dependencies only, and no sources', () => {
    const lock = repositoryLock().packages;
    const devOnly = Object.keys(lock).filter((where) => /^node_modules\/[^/]+$|^node_modules\/@[^/]+\/[^/]+$/.test(where) && lock[where].dev);
    expect(devOnly.length).toBeGreaterThan(0);
    expect(devOnly.filter((where) => existsSync(path.join(app, where)))).toEqual([]);
    expect(existsSync(path.join(app, 'node_modules', 'fastify'))).toBe(true);
    expect(existsSync(path.join(app, 'src'))).toBe(false);
    expect(existsSync(path.join(app, 'dist', 'src', 'cli.js'))).toBe(true);
  });

  it('serves: /healthz, /readyz and a chat request', async () => {
    expect(url, `the image command did not start listening:\n${output}`).toBeDefined();
    const health = await fetch(`${url}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });
    const ready = await fetch(`${url}/readyz`);
    expect(ready.status).toBe(200);
    expect(((await ready.json()) as { status: string }).status).toBe('ready');
    const chat = await fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer sk-image-test-123456', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'demo', messages: [{ role: 'user', content: 'ping' }] }),
    });
    expect(chat.status).toBe(200);
  });

  it('runs as PID 1 of its namespace, with the heap flags, without re-running Node', () => {
    expect(url, `the image command did not start listening:\n${output}`).toBeDefined();
    expect(readFileSync(`/proc/${gatewayPid}/status`, 'utf8')).toMatch(new RegExp(`^NSpid:\\s+${gatewayPid}\\s+1$`, 'm'));
    // A re-run would replace the command line (process.execve) or leave this process as a parent.
    const cmdline = readFileSync(`/proc/${gatewayPid}/cmdline`, 'utf8').split('\0').slice(0, -1);
    const [command, args] = runnable(imageCommand(stage));
    expect(cmdline).toEqual([command, ...args]);
    expect(cmdline).toEqual(expect.arrayContaining(['--max-semi-space-size=8', '--heap-growing-percent=25', '--no-concurrent-recompilation']));
    expect(readFileSync(`/proc/${gatewayPid}/environ`, 'utf8').split('\0')).toContain('MALLOC_MMAP_THRESHOLD_=1048576');
    const children = spawnSync('ps', ['-o', 'pid=', '--ppid', String(gatewayPid)], { encoding: 'utf8' }).stdout.trim();
    expect(children, 'the gateway started a child process').toBe('');
  });

  it('passes the HEALTHCHECK command', () => {
    expect(url, `the image command did not start listening:\n${output}`).toBeDefined();
    expect(healthcheck(`${url}/healthz`)).toBe(0);
    expect(healthcheck(`${url}/no-such-path`)).toBe(1);
  });

  it('writes only to the state volume: the application and config folders and /tmp are unchanged', () => {
    expect(url, `the image command did not start listening:\n${output}`).toBeDefined();
    expect(readdirSync(path.join(root, 'tmp'))).toEqual([]);
    expect(existsSync(path.join(root, K8S_LAYOUT.stateDir, 'switchyard-state.sqlite'))).toBe(true);
    expect(snapshot(app)).toEqual(appFilesBefore);
    expect(snapshot(path.join(root, K8S_LAYOUT.configDir))).toEqual(configFilesBefore);
  });

  it('exits 0 on SIGTERM to PID 1 (what docker stop and the kubelet send) after a graceful shutdown, and the HEALTHCHECK then fails', async () => {
    expect(url, `the image command did not start listening:\n${output}`).toBeDefined();
    process.kill(gatewayPid!, 'SIGTERM');
    const result = await Promise.race([exit, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 15_000))]);
    expect(result, output).toEqual({ code: 0, signal: null });
    expect(output).toMatch(/shutting down/);
    expect(healthcheck(`${url}/healthz`)).toBe(1);
  });
});
