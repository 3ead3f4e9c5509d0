/**
 * deploy/kubernetes: every manifest validates against the Kubernetes API schemas
 * (kubernetes-models; the ServiceMonitor against the prometheus-operator CRD's model), names and
 * labels line up, the config and secret mounts are exactly K8S_LAYOUT (the layout the reload tests
 * rebuild), the probes and ports are the gateway's own (checked against a running gateway), and
 * the ConfigMap's gateway.yaml passes `switchyard validate --strict` with the Secret's files.
 * Kubernetes schemas accept unknown fields, so the fields that matter are also read back here.
 */
import { createRequire } from 'node:module';
import { Deployment } from 'kubernetes-models/apps/v1';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { startTestGateway, type TestGateway } from 'switchyard-gateway/kit/testing';
import { K8S_LAYOUT } from '../helpers/k8s-layout.ts';
import { instructions, last } from './dockerfile.ts';
import { envOf, imageCommand, optionOf, runtimeStage } from './image.ts';
import { kustomization, MODELS, manifestFiles, manifests, only } from './kubernetes.ts';
import { FILE_SYNTAX_NEEDED, fileReferences, validateInLayout } from './layout.ts';

const schema = createRequire(import.meta.url)('../../schemas/gateway.schema.json') as {
  properties: { server: { properties: Record<string, { default?: unknown }> }; metrics: { properties: Record<string, { default?: unknown }> } };
};

interface GatewayYaml {
  server?: { host?: string; port?: number; shutdownGraceMs?: number; workers?: number | string };
  metrics?: { enabled?: boolean; path?: string; port?: number; auth?: boolean };
  state?: { backend?: string; file?: string };
}

const configMap = only('v1/ConfigMap');
const configText = configMap.data?.[K8S_LAYOUT.configFile] ?? '';
const config = YAML.parse(configText) as GatewayYaml;
const deployment = only('apps/v1/Deployment');
const pod = deployment.spec!.template.spec!;
const container = pod.containers[0];
const portNumber = (name: string) => container.ports?.find((p) => p.name === name)?.containerPort;
const serverPort = config.server?.port ?? (schema.properties.server.properties.port.default as number);
const shutdownGraceMs = config.server?.shutdownGraceMs ?? (schema.properties.server.properties.shutdownGraceMs.default as number);
const metricsPath = config.metrics?.path ?? (schema.properties.metrics.properties.path.default as string);

describe('the Kubernetes manifests (deploy/kubernetes)', () => {
  it('lists every manifest of the folder in kustomization.yaml, each valid against its API schema', () => {
    const k = kustomization();
    expect([k.apiVersion, k.kind]).toEqual(['kustomize.config.k8s.io/v1beta1', 'Kustomization']);
    expect([...k.resources].sort()).toEqual(manifestFiles());
    const all = manifests();
    expect(all.map((m) => m.key).sort()).toEqual(Object.keys(MODELS).sort());
    for (const m of all) {
      const Model = MODELS[m.key as keyof typeof MODELS];
      expect(Model, `${m.file}: no schema for ${m.key}`).toBeDefined();
      expect(() => new Model(m.object as never).validate(), `${m.file} (${m.key})`).not.toThrow();
      expect((m.object.metadata as { name?: string }).name, `${m.file}: metadata.name`).toMatch(/^[a-z0-9-]+$/);
    }
    // The validation is live: a wrong type is refused.
    expect(() => new Deployment({ ...(deployment.toJSON() as object), spec: { ...deployment.spec!, replicas: 'two' as unknown as number } }).validate()).toThrow(/replicas/);
  });

  it('lines up names, selectors and port names', () => {
    const podLabels = deployment.spec!.template.metadata!.labels!;
    // A selector that is empty would select every pod of the namespace.
    const matches = (selector: Record<string, string> | undefined) => Object.keys(selector ?? {}).length > 0 && Object.entries(selector!).every(([k, v]) => podLabels[k] === v);
    const service = only('v1/Service');
    const monitor = only('monitoring.coreos.com/v1/ServiceMonitor');
    expect(matches(deployment.spec!.selector.matchLabels)).toBe(true);
    expect(matches(service.spec!.selector)).toBe(true);
    expect(matches(only('policy/v1/PodDisruptionBudget').spec!.selector?.matchLabels)).toBe(true);
    expect(matches(only('networking.k8s.io/v1/NetworkPolicy').spec!.podSelector?.matchLabels)).toBe(true);
    const hpa = only('autoscaling/v2/HorizontalPodAutoscaler');
    expect(hpa.spec!.scaleTargetRef).toMatchObject({ apiVersion: 'apps/v1', kind: 'Deployment', name: deployment.metadata!.name });
    expect(hpa.spec!.minReplicas).toBeGreaterThanOrEqual(2);
    const containerPorts = (container.ports ?? []).map((p) => p.name);
    for (const p of service.spec!.ports!) expect(containerPorts, `Service port ${p.name}`).toContain(p.targetPort);
    for (const rule of only('networking.k8s.io/v1/NetworkPolicy').spec!.ingress ?? []) for (const p of rule.ports ?? []) expect(containerPorts).toContain(p.port);
    expect(Object.entries(monitor.spec.selector.matchLabels ?? {}).every(([k, v]) => service.metadata!.labels?.[k] === v)).toBe(true);
    for (const e of monitor.spec.endpoints ?? []) expect(service.spec!.ports!.map((p) => p.name)).toContain(e.port);
  });

  it('mounts the ConfigMap and the Secret exactly as K8S_LAYOUT says, whole (no subPath) and read-only', () => {
    const mounts = container.volumeMounts ?? [];
    const volume = (name: string) => pod.volumes?.find((v) => v.name === name);
    const mountOf = (pred: (v: NonNullable<ReturnType<typeof volume>>) => boolean) => mounts.filter((m) => pred(volume(m.name)!));
    const configMounts = mountOf((v) => v.configMap?.name === K8S_LAYOUT.configMap);
    expect(configMounts.map((m) => ({ path: m.mountPath, readOnly: m.readOnly, subPath: m.subPath }))).toEqual([{ path: K8S_LAYOUT.configDir, readOnly: true, subPath: undefined }]);
    expect(configMap.metadata!.name).toBe(K8S_LAYOUT.configMap);
    expect(Object.keys(configMap.data ?? {})).toEqual([K8S_LAYOUT.configFile]);
    const secretMounts = mountOf((v) => v.secret?.secretName === K8S_LAYOUT.secret);
    expect(secretMounts.map((m) => ({ path: m.mountPath, readOnly: m.readOnly, subPath: m.subPath }))).toEqual([{ path: K8S_LAYOUT.secretsDir, readOnly: true, subPath: undefined }]);
    const secretVolume = pod.volumes!.find((v) => v.secret?.secretName === K8S_LAYOUT.secret)!;
    expect(secretVolume.secret!.items, 'every key of the Secret is a file').toBeUndefined();
    expect(secretVolume.secret!.defaultMode).toBe(0o440);
    const secret = only('v1/Secret');
    expect(secret.metadata!.name).toBe(K8S_LAYOUT.secret);
    expect(Object.keys({ ...secret.data, ...secret.stringData }).sort()).toEqual([...K8S_LAYOUT.secretKeys].sort());
    const stateMount = mounts.find((m) => m.mountPath === K8S_LAYOUT.stateDir);
    expect(stateMount?.readOnly).not.toBe(true);
    expect(volume(stateMount!.name)?.emptyDir).toBeDefined();
    expect(mounts.find((m) => m.mountPath === '/tmp') && volume(mounts.find((m) => m.mountPath === '/tmp')!.name)?.emptyDir).toBeDefined();

    // The container runs the image's command, which reads the mounted file.
    expect(container.command).toBeUndefined();
    expect(container.args).toBeUndefined();
    expect(optionOf(imageCommand(), '--config')).toBe(`${K8S_LAYOUT.configDir}/${K8S_LAYOUT.configFile}`);
    // The config reads each of the Secret's keys, from the mounted folder, and keeps its state file on the writable volume.
    expect(fileReferences(configText).sort()).toEqual(K8S_LAYOUT.secretKeys.map((k) => `${K8S_LAYOUT.secretsDir}/${k}`).sort());
    expect(config.state?.file?.startsWith(`${K8S_LAYOUT.stateDir}/`)).toBe(true);
  });

  it('uses the gateway port and the image user, and outlasts shutdownGraceMs on termination', () => {
    expect(portNumber('http')).toBe(serverPort);
    expect(serverPort).toBe(schema.properties.server.properties.port.default);
    expect(portNumber('metrics')).toBe(config.metrics?.port);
    expect(config.server?.host).toBe('0.0.0.0');
    const stage = runtimeStage();
    const exposed = instructions(stage, 'EXPOSE').flatMap((i) => i.text.split(/\s+/).map(Number));
    expect(exposed).toEqual(expect.arrayContaining([serverPort, config.metrics!.port!]));
    expect(new URL(envOf(stage).SWITCHYARD_HEALTHCHECK_URL).port).toBe(String(serverPort));

    const [uid, gid] = last(stage, 'USER').text.split(':').map(Number);
    expect(uid).toBeGreaterThan(0);
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: uid, runAsGroup: gid, fsGroup: gid });
    expect(container.securityContext).toMatchObject({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
    expect(container.resources?.requests).toMatchObject({ cpu: expect.any(String), memory: expect.any(String) });
    expect(container.resources?.limits?.memory).toBeDefined();

    const preStopMs = (container.lifecycle?.preStop?.sleep?.seconds ?? 0) * 1000;
    expect(preStopMs).toBeGreaterThan(0);
    expect(pod.terminationGracePeriodSeconds! * 1000).toBeGreaterThan(preStopMs + shutdownGraceMs);
  });

  describe('probes against the running gateway', () => {
    let t: TestGateway;
    beforeAll(async () => {
      // The ConfigMap's server and metrics settings, on free loopback ports.
      t = await startTestGateway({
        server: { ...config.server, host: '127.0.0.1', port: 0 },
        metrics: { ...config.metrics, port: 0 },
        providers: { mock: { plugin: 'mock' } },
        models: { demo: { targets: [{ provider: 'mock', model: 'mock-1' }] } },
      });
    }, 60_000);
    afterAll(() => t?.close());

    it('answers the readiness, liveness and startup probes with 200 on the http port', async () => {
      const probes = { readiness: container.readinessProbe, liveness: container.livenessProbe, startup: container.startupProbe };
      expect(probes.readiness?.httpGet?.path).toBe('/readyz');
      expect(probes.liveness?.httpGet?.path).toBe('/healthz');
      for (const [name, probe] of Object.entries(probes)) {
        expect(probe?.httpGet?.port, `${name} probe port`).toBe('http');
        const res = await fetch(`${t.url}${probe!.httpGet!.path}`);
        expect(res.status, `${name} probe ${probe!.httpGet!.path}`).toBe(200);
      }
    });

    it('serves the ServiceMonitor path on the metrics listener', async () => {
      const endpoint = only('monitoring.coreos.com/v1/ServiceMonitor').spec.endpoints![0];
      expect(endpoint.path).toBe(metricsPath);
      expect(t.gateway.metricsUrl).toBeDefined();
      expect(new URL(t.gateway.metricsUrl!).port).not.toBe(new URL(t.url).port);
      const res = await fetch(t.gateway.metricsUrl!);
      expect(res.status).toBe(200);
      expect(await res.text()).toMatch(/^switchyard_\w+/m);
      expect((await fetch(`${t.url}${metricsPath}`)).status, 'metrics are not on the public port').toBe(404);
    });
  });

  it("has a gateway.yaml that passes `switchyard validate --strict` with the Secret's files, and fails without one", () => {
    const env = { REDIS_URL: 'redis://127.0.0.1:6379' };
    const ok = validateInLayout(configText, K8S_LAYOUT.secretKeys, env);
    expect(ok.status, ok.output).toBe(0);
    expect(ok.output).toMatch(/: OK \(/);
    const missing = `${K8S_LAYOUT.secretsDir}/openai-api-key`;
    const without = validateInLayout(
      configText,
      K8S_LAYOUT.secretKeys.filter((k) => k !== 'openai-api-key'),
      env,
    );
    expect(without.status, FILE_SYNTAX_NEEDED).not.toBe(0);
    expect(without.output.replaceAll(without.root, '')).toContain(missing);
  }, 120_000);
});
