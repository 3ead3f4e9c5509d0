import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// The package imports itself by name (plugins use only the public entry points); in the repo those
// resolve to the TypeScript sources, as package.json's "switchyard-source" condition says.
const src = (p: string) => fileURLToPath(new URL(`./src/${p}`, import.meta.url));

export default defineConfig({
  resolve: {
    alias: [
      { find: /^switchyard-gateway\/kit\/testing$/, replacement: src('kit/testing/index.ts') },
      { find: /^switchyard-gateway\/kit$/, replacement: src('kit/index.ts') },
      { find: /^switchyard-gateway$/, replacement: src('index.ts') },
    ],
  },
  test: {
    include: ['test/**/*.test.ts', 'src/**/*.test.ts', 'plugins/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
  },
});
