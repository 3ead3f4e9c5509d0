/**
 * The JSON logger's real destination (stdout, batched, written off the main thread): every line
 * reaches the pipe whole and in order however the process ends, a flush before exit, an exit
 * without one (pino's exit hook) or a process that simply runs out of work.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/repo.ts';

const LOGGER = pathToFileURL(path.join(ROOT, 'src/logger.ts')).href;
const TEXT = 'é 中文 🎉 "quoted" \\ line';

/** Runs a process that logs `lines` lines then ends as `ending` says; its stdout, parsed. */
async function run(lines: number, ending: string): Promise<Array<Record<string, unknown>>> {
  const script = `
    import { createLogger } from ${JSON.stringify(LOGGER)};
    const log = createLogger({ level: 'info', format: 'json' });
    for (let i = 0; i < ${lines}; i++) log.info({ i, text: ${JSON.stringify(TEXT)} }, 'line');
    ${ending}
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  const out: Buffer[] = [];
  let err = '';
  child.stdout.on('data', (d: Buffer) => out.push(d));
  child.stderr.on('data', (d) => (err += d));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  expect(code, err).toBe(0);
  const text = Buffer.concat(out).toString('utf8');
  expect(text.endsWith('\n')).toBe(true);
  return text
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

function expectAll(parsed: Array<Record<string, unknown>>, lines: number): void {
  expect(parsed).toHaveLength(lines);
  parsed.forEach((line, i) => expect(line).toMatchObject({ level: 30, service: 'switchyard', i, text: TEXT, msg: 'line' }));
}

describe('the JSON logger on stdout', () => {
  it('a flush before exit writes every line', async () => {
    expectAll(await run(5_000, 'log.flush(() => process.exit(0));'), 5_000);
  });

  it('an exit without a flush still writes every line, several batches of them', async () => {
    expectAll(await run(20_000, 'process.exit(0);'), 20_000);
  });

  it('a process that runs out of work writes every line, fewer than a batch', async () => {
    expectAll(await run(3, ''), 3);
  });
});
