import pino, { type LoggerOptions } from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { directJsonLines } from './log-writer.ts';

const REDACT = ['authorization', 'headers.authorization', 'apiKey', 'options.apiKey'];

/** Two loggers alike but for the hook, each writing its lines into an array. */
function pair(extra: LoggerOptions = {}) {
  const plain: string[] = [];
  const direct: string[] = [];
  const options: LoggerOptions = { base: { service: 'switchyard' }, redact: { paths: REDACT, censor: '[REDACTED]' }, timestamp: () => ',"time":1', ...extra };
  const hook = directJsonLines();
  const directLogger = pino({ ...options, hooks: { logMethod: hook.logMethod } }, { write: (s: string) => direct.push(s) });
  hook.trust(directLogger);
  return {
    plain: pino(options, { write: (s: string) => plain.push(s) }),
    direct: directLogger,
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
    const logger = pino({ base: null, redact: REDACT }, { write: () => undefined });
    const hook = directJsonLines();
    const method = vi.fn();
    // Not trusted yet: pino's path.
    hook.logMethod.call(logger, [{ reqId: 'r', status: 200 }, 'request'], method, 30);
    expect(method).toHaveBeenCalledTimes(1);
    hook.trust(logger);
    hook.logMethod.call(logger, [{ reqId: 'r', status: 200 }, 'request'], method, 30);
    expect(method).toHaveBeenCalledTimes(1);
    for (const args of [[{ apiKey: 'k' }, 'm'], [{ err: new Error('e') }, 'm'], [{ n: 1n }, 'm'], [new Custom(), 'm'], [{ a: 1 }], [{ a: 1 }, 'x %s', 'y']]) {
      hook.logMethod.call(logger, args as never, method, 30);
    }
    expect(method).toHaveBeenCalledTimes(7);
  });

  it('the trusted logger and a child with bindings only write directly', () => {
    const { direct } = pair();
    // pino's own serialisation, counted.
    const internals = direct as unknown as Record<symbol, (...a: unknown[]) => string>;
    const own = internals[pino.symbols.asJsonSym];
    let pinoPath = 0;
    internals[pino.symbols.asJsonSym] = function (this: unknown, ...a: unknown[]) {
      pinoPath++;
      return own.apply(this, a);
    };
    direct.info({ reqId: 'r' }, 'request');
    direct.child({ worker: 1 }).warn({ reqId: 'r' }, 'request');
    expect(pinoPath).toBe(0);
    direct.child({ worker: 1 }, { serializers: { reqId: String } }).info({ reqId: 'r' }, 'request');
    expect(pinoPath).toBe(1);
  });

  it('a child with serializers, redaction or formatters of its own gets them, as from pino', () => {
    const { plain, direct, lines } = pair();
    const children = [{ serializers: { user: (u: { name: string }) => u.name } }, { redact: ['user.name'] }, { formatters: { log: (o: object) => ({ ...o, formatted: true }) } }];
    for (const options of children) {
      plain.child({ c: 1 }, options).info({ user: { name: 'ada', id: 7 } }, 'child');
      direct.child({ c: 1 }, options).info({ user: { name: 'ada', id: 7 } }, 'child');
    }
    expect(lines().direct).toEqual(lines().plain);
    expect(lines().direct[0]).toContain('"user":"ada"');
    expect(lines().direct[1]).toContain('"name":"[Redacted]"');
    expect(lines().direct[2]).toContain('"formatted":true');
  });

  it('leaves a logger with a mixin to pino', () => {
    const { plain, direct, lines } = pair({ mixin: () => ({ mixed: true }) });
    plain.info({ a: 1 }, 'm');
    direct.info({ a: 1 }, 'm');
    expect(lines().direct).toEqual(lines().plain);
    expect(lines().direct[0]).toContain('"mixed":true');
  });
});
