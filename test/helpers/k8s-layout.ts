/**
 * The file layout Kubernetes gives the gateway, shared by the deployment manifests' test (the
 * manifests must mount exactly this) and the reload tests that rebuild it in a temporary folder.
 * A ConfigMap volume holds each key as `<dir>/<key>` → `..data/<key>`, with `..data` a symlink to a
 * timestamped folder that the kubelet swaps atomically on an update; a Secret volume is the same.
 */
export const K8S_LAYOUT = {
  /** Where the ConfigMap `switchyard-config` is mounted; its key `gateway.yaml` is the config file. */
  configDir: '/etc/switchyard',
  configFile: 'gateway.yaml',
  configMap: 'switchyard-config',
  /** Where the Secret `switchyard-secrets` is mounted; gateway.yaml reads each key with `${file:<secretsDir>/<key>}`. */
  secretsDir: '/etc/switchyard/secrets',
  secret: 'switchyard-secrets',
  /** The Secret's keys the example config reads. */
  secretKeys: ['openai-api-key', 'anthropic-api-key', 'admin-key'],
  /** Where `state.path` (the SQLite state file) lives: a writable volume, the root filesystem being read-only. */
  stateDir: '/var/lib/switchyard',
} as const;
