#!/usr/bin/env node
// Runs the TypeScript sources directly through tsx, so plugins written in TypeScript load by path
// too, and registers the hook that re-imports a plugin's own files on reload.
import { register as registerHooks } from 'node:module';
import { register } from 'tsx/esm/api';

register();
registerHooks('../src/plugins/generation-hooks.mjs', import.meta.url, { data: { core: new URL('../src/', import.meta.url).href } });
await import('../src/cli.ts');
