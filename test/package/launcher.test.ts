/**
 * On a Node older than Node 24 without execve, the bin (and `npm start`) runs Node 24 as a child
 * (bin/ensure-node.mjs runChild). A launcher killed with SIGKILL cannot pass the signal on: its
 * gateway, left running, would hold the port the next start needs. The child notices that its
 * parent changed and shuts down gracefully. The launcher here is runChild itself, called as an old
 * Node's bin calls it.
 */
import { spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
import { ROOT } from '../helpers/repo.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'switchyard-launcher-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('a gateway run by a launcher (an older Node)', () => {
  it.runIf(process.platform === 'linux')(
    'shuts down gracefully when its launcher is killed with -9, and frees the port',
    async () => {
      const config = path.join(dir, 'gateway.yaml');
      copyFileSync(path.join(ROOT, 'gateway.yaml'), config);
      const ensure = pathToFileURL(path.join(ROOT, 'bin', 'ensure-node.mjs')).href;
      const bin = path.join(ROOT, 'bin', 'switchyard.mjs');
      const code = `import { runChild } from ${JSON.stringify(ensure)}; runChild(process.execPath, ${JSON.stringify([bin, '--config', config, '--port', '0', '--no-watch'])});`;
      const launcher = spawn(process.execPath, ['--input-type=module', '-e', code], { cwd: dir, env: { ...process.env, OPENAI_API_KEY: '' } });
      let out = '';
      launcher.stdout.on('data', (d) => (out += d));
      launcher.stderr.on('data', (d) => (out += d));
      let m: RegExpExecArray | null = null;
      for (const deadline = Date.now() + 60_000; !(m = /Switchyard listening on (http:\/\/127\.0\.0\.1:\d+)\/v1/.exec(out)) && Date.now() < deadline && launcher.exitCode === null; )
        await new Promise((r) => setTimeout(r, 50));
      if (!m) {
        launcher.kill('SIGKILL');
        throw new Error(`the gateway did not listen:\n${out}`);
      }
      const url = m[1]!;
      // The gateway is the launcher's child (the bin re-ran itself in its place with its V8 flags).
      const [gateway] = readFileSync(`/proc/${launcher.pid}/task/${launcher.pid}/children`, 'utf8').trim().split(/\s+/).map(Number);
      expect(readFileSync(`/proc/${gateway}/cmdline`, 'utf8')).toContain('--max-semi-space-size=8');
      expect((await fetch(`${url}/readyz`)).status).toBe(200);

      launcher.kill('SIGKILL');
      onTestFinished(() => {
        if (alive(gateway!)) process.kill(gateway!, 'SIGKILL');
      });
      for (const deadline = Date.now() + 20_000; alive(gateway!) && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 50));
      expect(alive(gateway!), 'the gateway outlived its launcher').toBe(false);
      await expect(fetch(`${url}/readyz`)).rejects.toThrow();
      // Its own graceful shutdown (its output still reaches this pipe), not a kill.
      expect(out).toContain('shutting down: finishing in-flight requests');
    },
    90_000,
  );
});
