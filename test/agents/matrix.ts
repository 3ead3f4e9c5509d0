/**
 * The client × provider family matrix the battery produces: written to test/agents/matrix.md and
 * matrix.json after a whole run, and compared with the README's copy between its markers (set
 * UPDATE_AGENTS_MATRIX=1 to rewrite that copy instead).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Outcome } from './case.ts';
import { FAMILY_LABEL, type Family } from './gateways.ts';

const HERE = new URL('./', import.meta.url);
const README = fileURLToPath(new URL('../../README.md', import.meta.url));
const START = '<!-- agents-matrix:start (written by test/agents/agents.test.ts) -->';
const END = '<!-- agents-matrix:end -->';

/** A case the battery does not run (a client × family pair that is not meaningful). */
const NOT_RUN = 'n/a';

function cell(o: Outcome | undefined): string {
  if (!o) return NOT_RUN;
  const mode = o.mode.startsWith('translated') ? 'translated' : o.mode;
  return o.passed ? `✅ ${mode}` : `❌ ${o.cause ? o.cause.replace(/\|/g, '\\|') : o.problems.join(', ')}`;
}

function dropCell(o: Outcome | undefined): string {
  if (!o) return NOT_RUN;
  return o.dropped.length ? o.dropped.map((d) => `\`${d.replace(/\|/g, '\\|')}\``).join(', ') : '—';
}

function table(outcomes: Outcome[], clients: string[], families: readonly Family[], show: (o: Outcome | undefined) => string): string {
  const rows = clients.map((client) => `| ${client} | ${families.map((f) => show(outcomes.find((o) => o.client === client && o.family === f))).join(' | ')} |`);
  return [`| client | ${families.map((f) => FAMILY_LABEL[f]).join(' | ')} |`, `|---|${families.map(() => '---|').join('')}`, ...rows].join('\n');
}

/** The outcome table, then what the gateway reported dropping for each client. */
export function matrixTable(outcomes: Outcome[], clients: string[], families: readonly Family[]): string {
  return [table(outcomes, clients, families, cell), '', 'Reported as dropped (`x-switchyard-dropped`, the log line):', '', table(outcomes, clients, families, dropCell)].join('\n');
}

/** Writes the artifacts (test/agents/matrix.md and matrix.json, for a partial run too): what one run found. */
export function writeMatrixArtifacts(outcomes: Outcome[], clients: string[], families: readonly Family[]): string {
  const table = matrixTable(outcomes, clients, families);
  writeFileSync(new URL('matrix.md', HERE), `${table}\n`);
  const details = outcomes.map(({ client, family, passed, problems, cause, dropped, mode, seconds }) => ({ client, family, passed, problems, cause, dropped, mode, seconds }));
  writeFileSync(new URL('matrix.json', HERE), `${JSON.stringify(details, null, 2)}\n`);
  return table;
}

/** Writes the artifacts; returns a message when the README's table differs (and was not rewritten). */
export function publishMatrix(outcomes: Outcome[], clients: string[], families: readonly Family[]): string | undefined {
  const table = writeMatrixArtifacts(outcomes, clients, families);
  const readme = readFileSync(README, 'utf8');
  const from = readme.indexOf(START);
  const to = readme.indexOf(END);
  if (from < 0 || to < from) return `README.md has no matrix between ${START} and ${END}`;
  const current = readme.slice(from + START.length, to).trim();
  if (current === table) return undefined;
  if (process.env.UPDATE_AGENTS_MATRIX === '1') {
    writeFileSync(README, `${readme.slice(0, from + START.length)}\n${table}\n${readme.slice(to)}`);
    return undefined;
  }
  return `README.md's agents matrix differs from this run's (test/agents/matrix.md); rerun with UPDATE_AGENTS_MATRIX=1 to rewrite it:\n${table}`;
}
