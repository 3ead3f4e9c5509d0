/**
 * One case: a client asked, through one family's gateway, to write a file and say a final text,
 * with the scripted model answering. It passes when the client exits 0, the file holds the
 * content, and the client printed the final text; the outcome also says which wire reached the
 * upstream (pass-through when it is the client's own).
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AgentClient, RunResult } from './clients/run.ts';
import { tempDir } from './clients/run.ts';
import type { TestGateway } from '../../src/kit/testing/index.ts';
import { type Family, keyFor } from './gateways.ts';
import { type AgentCase, promptFor } from './script/model.ts';
import type { ScriptedModel, Wire } from './script/upstream.ts';

export interface Outcome {
  client: string;
  family: Family;
  passed: boolean;
  /** Why it failed: empty when it passed. */
  problems: string[];
  /** The error the client reported, when it failed with one: status and message, shortened. */
  cause?: string;
  /** What the gateway reported dropping from this client's requests (its log lines' `dropped`). */
  dropped: string[];
  /** `pass-through` or `translated (responses → chat)`, from the wires the upstream saw. */
  mode: string;
  result: RunResult;
  /** How long the client ran. */
  seconds: number;
}

export function slug(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
}

/** How the requests of a case reached the upstream. */
function modeOf(speaks: Wire, wires: Wire[]): string {
  const seen = [...new Set(wires)];
  if (seen.length === 0) return 'no upstream call';
  if (seen.length === 1 && seen[0] === speaks) return 'pass-through';
  return `translated (${speaks} → ${seen.join(', ')})`;
}

/**
 * The error a failed client reported, from what it printed: the first HTTP error status and the
 * first error message (a JSON `message`, or the text after Claude Code's `API Error: 400`), with
 * request ids taken out so that the same failure reads the same each run.
 */
export function causeOf(text: string): string | undefined {
  const status = /\b(?:status:?\s*|API Error:\s*|Error:?\s*)([45]\d\d)\b/.exec(text)?.[1] ?? /\b([45]\d\d)\b(?= |\{)/.exec(text)?.[1];
  const message = /"message"\s*:\s*"((?:[^"\\]|\\.){1,300})"/.exec(text)?.[1] ?? /(?:API Error|Error): [45]\d\d ([^\n]{1,300})/.exec(text)?.[1];
  if (!status && !message) return undefined;
  const short = message
    ?.replace(/\b(?:req|msg|resp)_[0-9a-zA-Z]+/g, '…')
    .replace(/\\"/g, '"')
    .slice(0, 90)
    .trim();
  return [status, short].filter(Boolean).join(' ');
}

/** The end of a long text: the part of a CLI's log that says what went wrong. */
function tail(text: string, lines = 12): string {
  return text.trim().split('\n').slice(-lines).join('\n');
}

/** The fields the gateway's request log lines name as dropped for this key, each once. */
function droppedFor(gateway: TestGateway, keyName: string): string[] {
  const lines = gateway.logs.filter((l) => l.key === keyName && (l.msg === 'request' || l.msg === 'request failed'));
  return [...new Set(lines.flatMap((l) => (Array.isArray(l.dropped) ? l.dropped.map(String) : [])))].sort();
}

export async function runCase(client: AgentClient, family: Family, model: ScriptedModel, gateway: TestGateway, alias: string): Promise<Outcome> {
  const workDir = tempDir('work');
  const c: AgentCase = {
    id: `${slug(client.id)}-${family}-${randomBytes(3).toString('hex')}`,
    file: path.join(workDir, 'agent-note.txt'),
    content: `note-${randomBytes(4).toString('hex')}`,
    finalText: `All done ${randomBytes(4).toString('hex')}`,
  };
  model.cases.add(c);
  const keyName = slug(client.id);
  const result = await client.run({ gatewayUrl: gateway.url, apiKey: keyFor(keyName), alias, prompt: promptFor(c), case: c, workDir, homeDir: tempDir('home') });
  const problems: string[] = [];
  if (result.exitCode !== 0) problems.push(`exit code ${result.exitCode}`);
  const written = existsSync(c.file) ? readFileSync(c.file, 'utf8') : undefined;
  if (written === undefined) problems.push('no file written');
  else if (written.trim() !== c.content) problems.push(`file holds ${JSON.stringify(written.slice(0, 80))}`);
  if (!result.output.includes(c.finalText)) problems.push('final text not printed');
  const wires = model.turns.filter((t) => t.caseId === c.id).map((t) => t.wire);
  // A request's log line follows its answer's last byte: let the last one land before reading them.
  await sleep(100);
  const cause = problems.length ? causeOf(`${result.log}\n${result.output}`) : undefined;
  return { client: client.id, family, passed: problems.length === 0, problems, cause, dropped: droppedFor(gateway, keyName), mode: modeOf(client.speaks, wires), result, seconds: result.seconds };
}

/** What a failing case's assertion prints: the problems, the model turns, the client's last words. */
export function explain(o: Outcome, model: ScriptedModel): string {
  const turns = model.turns.filter((t) => t.caseId?.startsWith(`${slug(o.client)}-${o.family}-`));
  const seen = turns.map(
    (t) => `  ${t.wire}: ${t.decision.kind === 'tool' ? `call ${t.decision.tool.name}` : `text ${JSON.stringify(t.decision.text)}`} (${t.tools.length} tools, ${t.toolResults.length} results)`,
  );
  return [
    `${o.client} → ${o.family}: ${o.problems.join('; ')}${o.cause ? ` (${o.cause})` : ''}`,
    'model turns:',
    ...(seen.length ? seen : ['  none']),
    'output:',
    tail(o.result.output),
    'log:',
    tail(o.result.log),
  ].join('\n');
}
