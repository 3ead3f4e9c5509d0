import pino, { type LoggerOptions } from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { directJsonLines } from './log-writer.ts';

const REDACT = ['authorization', 'headers.authorization', 'apiKey', 'options.apiKey'];
const SPECIAL = ['authorization', 'headers', 'apiKey', 'options', 'err'];

/** Two loggers alike but for the hook, each writing its lines into an array. */
function pair(extra: LoggerOptions = {}) {
  const plain: string[] = [];
  const direct: string[] = [];
  const options: LoggerOptions = { base: { service: 'switchyard' }, redact: { paths: REDACT, censor: '[REDACTED]' }, timestamp: () => ',"time":1', ...extra };
  return {
    plain: pino(options, { write: (s: string) => plain.push(s) }),
    direct: pino({ ...options, hooks: { logMethod: directJsonLines(SPECIAL) } }, { write: (s: string) => direct.push(s) }),
    lines: () => ({ plain, direct }),
  };
}

const cycle: Record<string, unknown> = { a: 1 };
cycle.self = cycle;

class Custom {
  field = 1;
}

// Each case: the arguments of one log call.
const CASES: Array<[string, unknown[]]> = [
  [
    'a request line',
    [
      {
        reqId: 'req_0123',
        key: 'dev',
        model: 'demo',
        provider: 'mock',
        upstreamModel: undefined,
        status: 200,
        stream: false,
        promptTokens: 12,
        durationMs: 1.25,
        attemptLog: [{ target: 'a', outcome: 'error', status: 503 }],
        dropped: ['logprobs'],
      },
      'request',
    ],
  ],
  ['no fields', [{}, 'empty']],
  [
    'values pino and JSON agree on',
    [{ inf: Number.POSITIVE_INFINITY, nan: Number.NaN, fn: () => 1, sym: Symbol('s'), nil: null, date: new Date(0), nested: { deep: [1, 'two', { three: true }] } }, 'values'],
  ],
  ['strings to escape', [{ quote: 'say "hi"', slash: 'a\\b', control: 'line\nbreak\ttab\u0001', unicode: 'é 中文 🎉', long: 'x'.repeat(100) }, 'a "quoted" message\n']],
  ['its own msg field', [{ msg: 'inner' }, 'outer']],
  ['a redacted key', [{ apiKey: 'sk-secret', other: 1 }, 'redacted']],
  ['a redacted nested key', [{ headers: { authorization: 'Bearer x', accept: 'json' } }, 'nested']],
  ['an error under err', [{ err: new Error('boom') }, 'failed']],
  ['an error alone', [new Error('alone')]],
  ['a BigInt', [{ n: 10n }, 'bigint']],
  ['a cycle', [{ cycle }, 'cycle']],
  ['a class instance', [new Custom(), 'instance']],
  ['a message alone', ['just a message']],
  ['format arguments', [{ a: 1 }, 'hello %s', 'world']],
  ['no message', [{ a: 1 }]],
];

describe('direct JSON log lines', () => {
  it.each(CASES)('%s: the same bytes as pino', (_name, args) => {
    const { plain, direct, lines } = pair();
    for (const level of ['info', 'warn', 'error'] as const) {
      (plain[level] as (...a: unknown[]) => void)(...args);
      (direct[level] as (...a: unknown[]) => void)(...args);
    }
    const out = lines();
    expect(out.direct).toHaveLength(3);
    expect(out.direct).toEqual(out.plain);
  });

  it('a child logger writes its bindings first, as pino does', () => {
    const { plain, direct, lines } = pair();
    plain.child({ worker: 2 }).info({ reqId: 'r' }, 'request');
    direct.child({ worker: 2 }).info({ reqId: 'r' }, 'request');
    expect(lines().direct).toEqual(lines().plain);
    expect(JSON.parse(lines().direct[0])).toEqual({ level: 30, time: 1, service: 'switchyard', worker: 2, reqId: 'r', msg: 'request' });
  });

  it('writes a plain object itself, and hands pino what pino must treat', () => {
    const logger = pino({ base: null }, { write: () => undefined });
    const hook = directJsonLines(SPECIAL);
    const method = vi.fn();
    hook.call(logger, [{ reqId: 'r', status: 200 }, 'request'], method, 30);
    expect(method).not.toHaveBeenCalled();
    for (const args of [[{ apiKey: 'k' }, 'm'], [{ err: new Error('e') }, 'm'], [{ n: 1n }, 'm'], [new Custom(), 'm'], [{ a: 1 }], [{ a: 1 }, 'x %s', 'y']]) {
      hook.call(logger, args as never, method, 30);
    }
    expect(method).toHaveBeenCalledTimes(6);
  });

  it('leaves a logger with a mixin to pino', () => {
    const { plain, direct, lines } = pair({ mixin: () => ({ mixed: true }) });
    plain.info({ a: 1 }, 'm');
    direct.info({ a: 1 }, 'm');
    expect(lines().direct).toEqual(lines().plain);
    expect(lines().direct[0]).toContain('"mixed":true');
  });
});
