#!/usr/bin/env node
/**
 * Runs a command under a Node that satisfies package.json's engines (undici 8, vitest 5 and
 * openai 7 need Node 22+): on an older Node, Node 24 LTS from ~/.node24 (installed from the npm
 * registry if needed, see bin/ensure-node.mjs) is put first on PATH. Plain JavaScript that any
 * Node can run.
 *
 *   node scripts/node22.mjs <command> [args...]     e.g. `node scripts/node22.mjs vitest run`
 */
import { runWithSuitableNode } from '../bin/ensure-node.mjs';

const [command, ...args] = process.argv.slice(2);
if (!command) {
  console.error('usage: node scripts/node22.mjs <command> [args...]');
  process.exit(2);
}

runWithSuitableNode(command, args);
