/**
 * Enough of a Dockerfile reader for the deployment tests: instructions (continuation lines
 * joined, comments dropped), grouped by stage, with exec-form arguments parsed as JSON and
 * `${ARG}` references in FROM resolved from the global ARG defaults.
 */
import { readFileSync } from 'node:fs';

export interface Instruction {
  keyword: string;
  /** The text after the keyword, continuation lines joined with a space. */
  text: string;
  /** For exec form (a JSON array after any --flags), its elements. */
  exec?: string[];
  /** Leading `--name=value` options (HEALTHCHECK, COPY --from). */
  flags: Record<string, string>;
}

export interface Stage {
  image: string;
  name?: string;
  instructions: Instruction[];
}

export interface Dockerfile {
  args: Record<string, string>;
  stages: Stage[];
}

export function readDockerfile(file: string): Dockerfile {
  const logical: string[] = [];
  let pending = '';
  for (const raw of readFileSync(file, 'utf8').split('\n')) {
    const line = raw.trim();
    if (line.startsWith('#') || (!pending && !line)) continue;
    if (line.endsWith('\\')) pending += `${line.slice(0, -1).trim()} `;
    else {
      logical.push(pending + line);
      pending = '';
    }
  }
  const args: Record<string, string> = {};
  const stages: Stage[] = [];
  for (const line of logical) {
    const [, keyword, rest] = /^(\S+)\s*(.*)$/.exec(line)!;
    const instruction = parseInstruction(keyword.toUpperCase(), rest);
    if (instruction.keyword === 'FROM') {
      const [image, as, name] = rest.replace(/\$\{(\w+)\}/g, (_, n: string) => args[n] ?? '').split(/\s+/);
      stages.push({ image, name: as?.toUpperCase() === 'AS' ? name : undefined, instructions: [] });
    } else if (stages.length === 0 && instruction.keyword === 'ARG') {
      const [name, value = ''] = rest.split('=');
      args[name] = value;
    } else stages.at(-1)?.instructions.push(instruction);
  }
  return { args, stages };
}

function parseInstruction(keyword: string, rest: string): Instruction {
  const flags: Record<string, string> = {};
  let body = rest;
  for (let m = /^--([\w-]+)=(\S+)\s*/.exec(body); m; m = /^--([\w-]+)=(\S+)\s*/.exec(body)) {
    flags[m[1]] = m[2];
    body = body.slice(m[0].length);
  }
  // HEALTHCHECK's command follows the word CMD.
  const command = keyword === 'HEALTHCHECK' ? body.replace(/^CMD\s+/, '') : body;
  const exec = command.startsWith('[') ? (JSON.parse(command) as string[]) : undefined;
  return { keyword, text: rest, exec, flags };
}

/** The stage's instructions with this keyword. */
export function instructions(stage: Stage, keyword: string): Instruction[] {
  return stage.instructions.filter((i) => i.keyword === keyword);
}

/** The one instruction with this keyword (the last one counts, as in Docker); fails when there is none. */
export function last(stage: Stage, keyword: string): Instruction {
  const found = instructions(stage, keyword).at(-1);
  if (!found) throw new Error(`the stage ${stage.name ?? stage.image} has no ${keyword}`);
  return found;
}

/** ENV instructions' variables (the `KEY=value KEY2=value2` form). */
export function envOf(stage: Stage): Record<string, string> {
  const env: Record<string, string> = {};
  for (const { text } of instructions(stage, 'ENV')) for (const m of text.matchAll(/(\w+)=(\S+)/g)) env[m[1]] = m[2];
  return env;
}

/** The shell commands of the stage's RUN instructions, split at `&&`. */
export function runCommands(stage: Stage): string[][] {
  return instructions(stage, 'RUN').flatMap((i) => i.text.split('&&').map((c) => c.trim().split(/\s+/)));
}

/**
 * Whether a path is excluded by .dockerignore patterns (Docker's rules for the patterns used here:
 * matched from the context root, `*` within one path segment, `**` across segments, a matched
 * folder excludes its contents, `!` re-includes).
 */
export function dockerignored(relative: string, patterns: string[]): boolean {
  let ignored = false;
  for (const p of patterns) {
    const negate = p.startsWith('!');
    const body = negate ? p.slice(1) : p;
    const regex = new RegExp(
      `^${body
        .split('**/')
        .map((part) =>
          part
            .replace(/[.+^${}()|[\]\\]/g, '\\$&')
            .replace(/\*/g, '[^/]*')
            .replace(/\?/g, '[^/]'),
        )
        .join('(?:.*/)?')}(?:/.*)?$`,
    );
    if (regex.test(relative)) ignored = !negate;
  }
  return ignored;
}

export function readDockerignore(file: string): string[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
}
