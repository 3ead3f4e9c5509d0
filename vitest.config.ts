import { fileURLToPath } from 'node:url';
import { configDefaults, defineConfig } from 'vitest/config';

// The package imports itself by name (plugins use only the public entry points); in the repo those
// resolve to the TypeScript sources, as package.json's "switchyard-source" condition says.
const src = (p: string) => fileURLToPath(new URL(`./src/${p}`, import.meta.url));

const ALL = ['test/**/*.test.ts', 'src/**/*.test.ts', 'plugins/**/*.test.ts'];

// Files that get a fresh worker each (isolate: true, vitest's default):
// - they start the gateway, its CLI or other tools as processes (npm, tsc, chromium, agent CLIs):
//   their timing must not depend on what an earlier file left running in a shared worker, and
//   their import time is small beside their run time;
// - they point the cloud SDKs at the emulators through process-wide state (process.env,
//   https.globalAgent) that the SDKs read and cache at module level;
// - the console's fake upstreams are module-level singletons in test/console/setup.ts, closed
//   by the first file that ends (they fail when they share a worker).
// Every other file shares one worker per CPU (isolate: false), so fastify, the SDKs and src/ are
// imported once per worker instead of once per file: that import was ~45 % of the suite's time.
// A file that turns out to depend on isolation goes here, rather than being patched to pass.
const ISOLATED = [
  'test/agents/**/*.test.ts',
  'test/cluster/**/*.test.ts',
  'test/console/**/*.test.ts',
  'test/deploy/**/*.test.ts',
  'test/faults/**/*.test.ts',
  'test/package/**/*.test.ts',
  'test/conformance/vertex-anthropic.test.ts',
  'test/core/{cli,docs,docs-examples,identity-surfaces,lazy-libraries,logger-output,scaffold}.test.ts',
  'test/governance/{memory-crash,redis-persistence,redis-rebuild,redis-replay,shared-redis,state-lock,usage-cli}.test.ts',
  'test/hardening/shutdown.test.ts',
  'test/observability/{prometheus,rules}.test.ts',
  'test/providers/{azure-entra,azure-entra-refresh,azure-managed-identity-cloud-shell,azure-managed-identity-imds,bedrock,bedrock-identity,bedrock-messages,vertex,vertex-identity,vertex-lazy,vertex-refresh}.test.ts',
  'test/reload/kubernetes.test.ts',
];

export default defineConfig({
  resolve: {
    alias: [
      { find: /^switchyard-gateway\/kit\/testing$/, replacement: src('kit/testing/index.ts') },
      { find: /^switchyard-gateway\/kit$/, replacement: src('kit/index.ts') },
      { find: /^switchyard-gateway$/, replacement: src('index.ts') },
    ],
  },
  test: {
    testTimeout: 20_000,
    // Setup starts gateways, CLIs and servers as processes; on a busy machine (two test files at
    // once on two cores) that can take tens of seconds. A guard against a hang, not a speed test.
    hookTimeout: 60_000,
    // One worker per CPU. vitest's default for `run` is one fewer, a single worker on the 2-core CI
    // machine, which left the second core idle while a file waited on its processes and sockets.
    maxWorkers: '100%',
    projects: [
      { extends: true, test: { name: 'shared', include: ALL, exclude: [...configDefaults.exclude, ...ISOLATED], isolate: false } },
      { extends: true, test: { name: 'isolated', include: ISOLATED } },
    ],
  },
});
