/**
 * deploy/systemd/switchyard.service: `systemd-analyze verify` reports nothing, `systemd-analyze
 * security --offline` rates it OK (exposure at most 2.0), and its command, stop and directories
 * agree with the gateway's. The unit is not started here (no systemd as PID 1 on these machines);
 * its command is the image's, which test/deploy/image-entrypoint.test.ts runs.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { K8S_LAYOUT } from '../helpers/k8s-layout.ts';
import { ROOT } from '../helpers/repo.ts';
import { imageCommand, optionOf } from './image.ts';

const UNIT = path.join(ROOT, 'deploy/systemd/switchyard.service');
const defaults = createRequire(import.meta.url)('../../schemas/gateway.schema.json').properties.server.properties as Record<string, { default: number }>;

/** The unit's settings as `Section.Key` → values (a key may repeat). */
function readUnit(): Map<string, string[]> {
  const settings = new Map<string, string[]>();
  let section = '';
  for (const line of readFileSync(UNIT, 'utf8').split('\n')) {
    const header = /^\[(\w+)\]$/.exec(line.trim());
    if (header) section = header[1];
    else if (/^\w+=/.test(line)) {
      const [key, ...value] = line.split('=');
      const name = `${section}.${key}`;
      settings.set(name, [...(settings.get(name) ?? []), value.join('=')]);
    }
  }
  return settings;
}

function systemdAnalyze(args: string[]) {
  const r = spawnSync('systemd-analyze', args, { encoding: 'utf8' });
  if (r.error) throw new Error(`systemd-analyze is required for this test (Debian/Ubuntu: apt-get install systemd): ${r.error.message}`);
  return r;
}

describe('the systemd unit (deploy/systemd/switchyard.service)', () => {
  const unit = readUnit();
  const one = (key: string) => unit.get(key)?.at(-1);

  it('passes systemd-analyze verify without a warning', () => {
    const r = systemdAnalyze(['verify', UNIT]);
    expect(`${r.stdout}${r.stderr}`.trim()).toBe('');
    expect(r.status).toBe(0);
  });

  it('is rated OK by systemd-analyze security (exposure at most 2.0)', () => {
    const r = systemdAnalyze(['security', '--offline=yes', '--threshold=20', '--no-pager', UNIT]);
    expect(r.status, r.stdout.split('\n').slice(-3).join('\n')).toBe(0);
    expect(r.stdout).toMatch(/Overall exposure level for switchyard\.service: [0-2]\.\d OK/);
  });

  it("runs the image's command: the same Node flags (no re-run of Node) and the same config path", () => {
    const exec = one('Service.ExecStart')!.split(/\s+/);
    expect(exec.slice(0, 2)).toEqual(['/usr/bin/env', 'node']);
    const image = imageCommand();
    const flags = (command: string[]) => command.filter((a) => a.startsWith('--max-') || a.startsWith('--heap-'));
    expect(flags(exec)).toEqual(flags(image));
    expect(flags(exec).length).toBeGreaterThan(0);
    expect(exec.find((a) => a.endsWith('/bin/switchyard.mjs'))).toBeDefined();
    expect(exec).toContain('serve');
    expect(optionOf(exec, '--config')).toBe(`${K8S_LAYOUT.configDir}/${K8S_LAYOUT.configFile}`);
    expect(one('Service.ExecReload')).toMatch(/kill -HUP \$MAINPID/);
  });

  it('stops gracefully: SIGTERM to the main process, and more time than shutdownGraceMs before SIGKILL', () => {
    expect(one('Service.KillSignal')).toBe('SIGTERM');
    expect(one('Service.KillMode')).toBe('mixed');
    const timeout = /^(\d+)s$/.exec(one('Service.TimeoutStopSec') ?? '');
    expect(timeout, 'TimeoutStopSec in seconds').not.toBeNull();
    expect(Number(timeout![1]) * 1000).toBeGreaterThan(defaults.shutdownGraceMs.default);
    expect(one('Service.Restart')).toBe('on-failure');
  });

  it('runs unprivileged with its state directory at the layout path', () => {
    expect(one('Service.User')).toMatch(/^[a-z][a-z0-9-]*$/);
    expect(one('Service.User')).not.toBe('root');
    expect(`/var/lib/${one('Service.StateDirectory')}`).toBe(K8S_LAYOUT.stateDir);
    expect(`/etc/${one('Service.ConfigurationDirectory')}`).toBe(K8S_LAYOUT.configDir);
    expect(one('Service.NoNewPrivileges')).toBe('yes');
    expect(one('Service.ProtectSystem')).toBe('strict');
    // V8's JIT writes code pages: this would crash Node.
    expect(one('Service.MemoryDenyWriteExecute') ?? 'no').toBe('no');
  });
});
