/**
 * deploy/kubernetes as the tests read it: kustomization.yaml's resources, every document parsed
 * as the API server's YAML reader does (YAML 1.1: `0440` is octal) and typed by its
 * kubernetes-models class, which also validates it against the Kubernetes API's JSON schema.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';
import { Deployment } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ConfigMap, Secret, Service } from 'kubernetes-models/v1';
import YAML from 'yaml';
import { ROOT } from '../helpers/repo.ts';

export const KUBE_DIR = path.join(ROOT, 'deploy/kubernetes');

/** The API kinds the manifests may use, each with its model (ServiceMonitor: the prometheus-operator CRD's). */
export const MODELS = {
  'v1/ConfigMap': ConfigMap,
  'v1/Secret': Secret,
  'v1/Service': Service,
  'apps/v1/Deployment': Deployment,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
  'monitoring.coreos.com/v1/ServiceMonitor': ServiceMonitor,
} as const;

type Models = typeof MODELS;
export type KindKey = keyof Models;

export interface Manifest {
  file: string;
  key: string;
  object: Record<string, unknown>;
}

export interface Kustomization {
  apiVersion: string;
  kind: string;
  resources: string[];
  [field: string]: unknown;
}

export function parseYaml11(text: string, where: string): unknown[] {
  return YAML.parseAllDocuments(text, { version: '1.1' }).map((doc) => {
    if (doc.errors.length > 0) throw new Error(`${where}: ${doc.errors[0].message}`);
    return doc.toJS();
  });
}

export function kustomization(): Kustomization {
  return parseYaml11(readFileSync(path.join(KUBE_DIR, 'kustomization.yaml'), 'utf8'), 'kustomization.yaml')[0] as Kustomization;
}

/** The YAML files in the folder besides kustomization.yaml. */
export function manifestFiles(): string[] {
  return readdirSync(KUBE_DIR)
    .filter((f) => /\.ya?ml$/.test(f) && f !== 'kustomization.yaml')
    .sort();
}

/** Every document of every resource kustomization.yaml lists, in its order. */
export function manifests(): Manifest[] {
  return kustomization().resources.flatMap((file) =>
    parseYaml11(readFileSync(path.join(KUBE_DIR, file), 'utf8'), file)
      .filter((object) => object !== null)
      .map((object) => {
        const o = object as Record<string, unknown>;
        return { file, key: `${o.apiVersion}/${o.kind}`, object: o };
      }),
  );
}

/** The one manifest of a kind, as its typed model (validated by the caller's first test). */
export function only<K extends KindKey>(key: K): InstanceType<Models[K]> {
  const found = manifests().filter((m) => m.key === key);
  if (found.length !== 1) throw new Error(`expected one ${key} in deploy/kubernetes, found ${found.length}`);
  const Model = MODELS[key] as unknown as new (data: unknown) => InstanceType<Models[K]>;
  return new Model(found[0].object);
}
