#!/usr/bin/env node
// Runs the TypeScript sources directly through tsx, so plugins written in TypeScript load by path too.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli.ts');
