/**
 * compose.yaml, read as Compose would (no Docker engine here, so it is never run): the gateway in
 * the Kubernetes file layout with a read-only root filesystem, Redis with append-only persistence,
 * Prometheus with deploy/prometheus/switchyard-rules.yaml and a scrape config that promtool
 * accepts; the gateway's gateway.yaml passes `switchyard validate --strict` with its secret files.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { K8S_LAYOUT } from '../helpers/k8s-layout.ts';
import { ROOT } from '../helpers/repo.ts';
import { FILE_SYNTAX_NEEDED, fileReferences, validateInLayout } from './layout.ts';

interface Service {
  build?: string;
  image?: string;
  read_only?: boolean;
  tmpfs?: string[];
  ports?: string[];
  volumes?: string[];
  secrets?: Array<{ source: string; target: string }>;
  command?: string[];
  depends_on?: Record<string, { condition: string }> | string[];
  stop_grace_period?: string;
}

const compose = YAML.parse(readFileSync(path.join(ROOT, 'compose.yaml'), 'utf8')) as {
  services: Record<string, Service>;
  secrets: Record<string, { environment?: string; file?: string }>;
  volumes: Record<string, unknown>;
};
const { gateway, redis, prometheus } = compose.services;

/** A `source:target[:ro]` volume entry by its target. */
function volumeAt(service: Service, target: string): { source: string; readOnly: boolean } | undefined {
  for (const entry of service.volumes ?? []) {
    const [source, to, mode] = entry.split(':');
    if (to === target) return { source, readOnly: mode === 'ro' };
  }
  return undefined;
}

const configMount = volumeAt(gateway, `${K8S_LAYOUT.configDir}/${K8S_LAYOUT.configFile}`);
const configText = configMount ? readFileSync(path.join(ROOT, configMount.source), 'utf8') : '';
const config = YAML.parse(configText) as { server: { host: string; port: number; shutdownGraceMs: number }; metrics: { port: number }; state: { backend: string; redis: { url: string } } };

/** Compose durations such as `40s` or `1m30s`, in ms. */
function durationMs(text: string): number {
  let ms = 0;
  for (const m of text.matchAll(/(\d+)(ms|s|m|h)/g)) ms += Number(m[1]) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] as 'ms' | 's' | 'm' | 'h'];
  return ms;
}

describe('compose.yaml', () => {
  it('runs the gateway from the Dockerfile in the Kubernetes layout, with a read-only root filesystem', () => {
    expect(gateway.build).toBe('.');
    expect(gateway.read_only).toBe(true);
    expect(gateway.tmpfs).toContain('/tmp');
    expect(configMount, `gateway.yaml mounted at ${K8S_LAYOUT.configDir}/${K8S_LAYOUT.configFile}`).toMatchObject({ readOnly: true });
    expect(existsSync(path.join(ROOT, configMount!.source))).toBe(true);
    const state = volumeAt(gateway, K8S_LAYOUT.stateDir);
    expect(state && state.source in compose.volumes, 'a named volume for the state directory').toBe(true);
    expect(gateway.secrets?.map((s) => s.target).sort()).toEqual(K8S_LAYOUT.secretKeys.map((k) => `${K8S_LAYOUT.secretsDir}/${k}`).sort());
    for (const s of gateway.secrets ?? []) expect(compose.secrets[s.source], `secret ${s.source}`).toBeDefined();
    expect(fileReferences(configText).sort()).toEqual(K8S_LAYOUT.secretKeys.map((k) => `${K8S_LAYOUT.secretsDir}/${k}`).sort());
    expect(config.server.host).toBe('0.0.0.0');
    expect(gateway.ports).toContain(`${config.server.port}:${config.server.port}`);
    expect(durationMs(gateway.stop_grace_period ?? '10s')).toBeGreaterThan(config.server.shutdownGraceMs);
  });

  it('keeps limits in Redis, which persists with an append-only file on a volume', () => {
    expect(config.state.backend).toBe('redis');
    expect(new URL(config.state.redis.url).hostname).toBe('redis');
    expect(redis.command?.join(' ')).toMatch(/--appendonly yes/);
    const data = volumeAt(redis, '/data');
    expect(data && data.source in compose.volumes).toBe(true);
    expect(gateway.depends_on).toMatchObject({ redis: { condition: 'service_healthy' } });
  });

  it('gives Prometheus the rules file and a scrape config of the gateway that promtool accepts', () => {
    const promConfigMount = (prometheus.volumes ?? []).find((v) => v.endsWith(':/etc/prometheus/prometheus.yml:ro'));
    expect(promConfigMount).toBeDefined();
    const promConfigFile = path.join(ROOT, promConfigMount!.split(':')[0]);
    const promConfig = YAML.parse(readFileSync(promConfigFile, 'utf8')) as { rule_files: string[]; scrape_configs: Array<{ static_configs: Array<{ targets: string[] }> }> };
    const rules = (prometheus.volumes ?? []).find((v) => v.startsWith('./deploy/prometheus/switchyard-rules.yaml:'));
    expect(rules, 'deploy/prometheus/switchyard-rules.yaml is mounted').toBeDefined();
    expect(promConfig.rule_files).toContain(rules!.split(':')[1]);
    expect(promConfig.scrape_configs.flatMap((s) => s.static_configs.flatMap((c) => c.targets))).toContain(`gateway:${config.metrics.port}`);
    // --syntax-only: the rule file's path is the one inside the container.
    const r = spawnSync('promtool', ['check', 'config', '--syntax-only', promConfigFile], { encoding: 'utf8' });
    expect(r.error, 'promtool is required (Debian/Ubuntu: apt-get install prometheus)').toBeUndefined();
    expect(r.status, `${r.stdout}${r.stderr}`).toBe(0);
  });

  it('has a gateway.yaml that passes `switchyard validate --strict` with its secret files, and fails without one', () => {
    const ok = validateInLayout(configText, K8S_LAYOUT.secretKeys);
    expect(ok.status, ok.output).toBe(0);
    const without = validateInLayout(
      configText,
      K8S_LAYOUT.secretKeys.filter((k) => k !== 'anthropic-api-key'),
    );
    expect(without.status, FILE_SYNTAX_NEEDED).not.toBe(0);
    expect(without.output.replaceAll(without.root, '')).toContain(`${K8S_LAYOUT.secretsDir}/anthropic-api-key`);
  }, 120_000);
});
