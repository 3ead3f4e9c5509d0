#!/usr/bin/env node
/**
 * `npm test`: the system programs the suites start are checked first (and installed with apt-get
 * as root on Debian; scripts/test-services.mjs), then `vitest run` with npm test's arguments, under
 * a Node that satisfies package.json's engines (Node 24 from ~/.node24 on an older one, as
 * scripts/node22.mjs does). Plain JavaScript that any Node can run, so a missing program is said
 * before Node 24 is fetched.
 *
 *   npm test                          the whole suite: missing programs are installed or stop it
 *   npm test -- test/core/x.test.ts   named files: missing programs are a warning only
 */
import { runWithSuitableNode } from '../bin/ensure-node.mjs';
import { ensureAgentClients, ensureServices } from './test-services.mjs';

const args = process.argv.slice(2);
// An argument that is not an option names test files (vitest's filters); `--opt=value` keeps a
// value with its option, a value given as the next argument counts as a filter (only a warning).
const files = args.filter((arg) => !arg.startsWith('-'));
ensureServices({ wholeSuite: files.length === 0 });
ensureAgentClients({ wanted: files.length === 0 || files.some((file) => file.includes('agents')) });

runWithSuitableNode('vitest', ['run'].concat(args));
