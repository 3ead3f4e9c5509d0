import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { LineBatch, type LineSink } from './logger.ts';

/** A sink that records what it was handed and when it was flushed. */
function recorder(): LineSink & { written: string[]; flushes: number } {
  return {
    written: [],
    flushes: 0,
    write(text: string) {
      this.written.push(text);
    },
    flush(cb) {
      this.flushes++;
      cb?.();
    },
    flushSync() {},
  };
}

/** A child process that logs `n` request lines through createLogger, then ends as `end` says; its stdout. */
function childLog(n: number, end: 'exit' | 'flush' | 'idle'): string {
  const logger = new URL('./logger.ts', import.meta.url).pathname;
  const script = `
    const { createLogger } = await import(${JSON.stringify(logger)});
    const log = createLogger({ level: 'info', format: 'json' });
    for (let i = 0; i < ${n}; i++) log.info({ reqId: 'r' + i, status: 200 }, 'request');
    ${end === 'exit' ? 'process.exit(0);' : end === 'flush' ? 'log.flush(() => process.exit(0));' : ''}`;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 30_000 });
  if (run.status !== 0) throw new Error(`the child failed (${run.status}): ${run.stderr}`);
  return run.stdout;
}

const reqIds = (stdout: string) =>
  stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l).reqId);
const expected = (n: number) => Array.from({ length: n }, (_, i) => `r${i}`);

describe('LineBatch', () => {
  it('hands lines on in order, once they reach the batch size', () => {
    const sink = recorder();
    const batch = new LineBatch(sink, -1, 10);
    batch.write('aaaa\n');
    expect(sink.written).toEqual([]);
    batch.write('bbbbbb\n');
    batch.write('c\n');
    expect(sink.written).toEqual(['aaaa\nbbbbbb\n']);
    batch.flush();
    expect(sink.written).toEqual(['aaaa\nbbbbbb\n', 'c\n']);
    // Without a callback nothing waits for the sink (an idle gateway writes nothing).
    expect(sink.flushes).toBe(0);
    let called = false;
    batch.flush(() => {
      called = true;
    });
    expect(sink.written).toHaveLength(2);
    expect([sink.flushes, called]).toEqual([1, true]);
  });

  it('on flushSync writes what the sink holds first, then its own lines, to the fd', () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'line-batch-')), 'out');
    const fd = openSync(file, 'w');
    const order: string[] = [];
    const sink = { ...recorder(), flushSync: () => void order.push('sink') };
    const batch = new LineBatch(sink, fd, 1000);
    batch.write('one\n');
    batch.write('two\n');
    batch.flushSync();
    closeSync(fd);
    expect(order).toEqual(['sink']);
    expect(readFileSync(file, 'utf8')).toBe('one\ntwo\n');
  });

  it('through createLogger, every line reaches stdout in order: exiting at once, after a flush, or when idle', () => {
    expect(reqIds(childLog(500, 'exit'))).toEqual(expected(500));
    expect(reqIds(childLog(500, 'flush'))).toEqual(expected(500));
    expect(reqIds(childLog(3, 'idle'))).toEqual(expected(3));
  });
});
