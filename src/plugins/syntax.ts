/**
 * Where a plugin's syntax error is. Node reports the file and line of a TypeScript error in the
 * stack, but a JavaScript module's compile error carries no position at all, so the folder's
 * source files are checked with `node --check` (only on this failure path) to find it.
 */
import { execFile } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import path from 'node:path';

/** `file:line:col: message` for a SyntaxError thrown while importing `entry`, when it can be found. */
export async function locateSyntaxError(err: unknown, entry: string, sourceFile: RegExp): Promise<string | undefined> {
  const fromStack = positionIn(String((err as Error)?.stack ?? ''));
  if (fromStack) return `${fromStack}: ${(err as Error).message}`;
  const dir = path.dirname(entry);
  const siblings = (await readdir(dir).catch(() => [] as string[])).filter((n) => sourceFile.test(n) && !n.endsWith('.json')).map((n) => path.join(dir, n));
  for (const file of [entry, ...siblings.filter((f) => f !== entry)].slice(0, 32)) {
    const report = await check(file);
    const at = report && positionIn(report);
    if (at) return `${at}: ${report!.match(/^SyntaxError: (.*)$/m)?.[1] ?? (err as Error).message}`;
  }
  return undefined;
}

/** "path:LINE\n<source line>\n<spaces>^" → "path:LINE:COL". */
function positionIn(text: string): string | undefined {
  const m = /^(\/[^\n]+|[A-Za-z]:\\[^\n]+):(\d+)\n[^\n]*\n( *)\^/m.exec(text);
  return m ? `${m[1]}:${m[2]}:${m[3].length + 1}` : undefined;
}

function check(file: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--check', file], { timeout: 10_000 }, (error, _stdout, stderr) => resolve(error ? stderr : undefined));
  });
}
