/** The onion runner: order in and out, re-callable `next()`, the guard against overlapping calls, onResponse hooks. */
import pino from 'pino';
import { describe, expect, it, vi } from 'vitest';
import type { Next, RequestContext, RequestOutcome, StageInstance } from '../plugin-api.ts';
import { compose, composeOnResponse } from './compose.ts';

/** Only the fields compose and composeOnResponse read. */
/** A silent logger whose `error` is a spy. */
function spiedLog() {
  const log = pino({ level: 'silent' });
  return Object.assign(log, { error: vi.spyOn(log, 'error') });
}

function contextOf(log = spiedLog()): RequestContext {
  const headers = {};
  const responseHeaders = {};
  return {
    id: 'req_1',
    operation: 'chat',
    ingress: 'chat',
    startedAt: 0,
    headers,
    body: { model: 'm', messages: [] },
    signal: new AbortController().signal,
    log,
    attempt: undefined,
    attempts: [],
    responseHeaders,
    transformAnswer: () => {},
    annotate: () => {},
  };
}

const OUTCOME: RequestOutcome = {
  ...{ status: 200, stream: false, usage: undefined, costUsd: undefined, error: undefined, errorInStream: false, attempts: [], provider: undefined, upstreamModel: undefined },
  ...{ refusal: undefined, timing: { durationMs: 1, upstreamMs: 0, overheadMs: 1, firstChunkMs: undefined }, traceId: undefined },
};

/** A stage that records entering and leaving around `next()`. */
function tracing(name: string, trace: string[]): StageInstance {
  return {
    name,
    async handle(_ctx, next) {
      trace.push(`${name}:in`);
      await next();
      trace.push(`${name}:out`);
    },
  };
}

describe('compose', () => {
  it('runs stages in order on the way in and in reverse on the way out, the terminal in the middle', async () => {
    const trace: string[] = [];
    const run = compose([tracing('a', trace), tracing('b', trace), tracing('c', trace)], async () => {
      trace.push('terminal');
    });
    await run(contextOf());
    expect(trace).toEqual(['a:in', 'b:in', 'c:in', 'terminal', 'c:out', 'b:out', 'a:out']);
  });

  it('skips stages without a handler (onResponse-only stages)', async () => {
    const trace: string[] = [];
    const onlyHook: StageInstance = { name: 'hook-only', onResponse: () => {} };
    const run = compose([tracing('a', trace), onlyHook, tracing('b', trace)], async () => {
      trace.push('terminal');
    });
    await run(contextOf());
    expect(trace).toEqual(['a:in', 'b:in', 'terminal', 'b:out', 'a:out']);
  });

  it('with no stages runs only the terminal, once, with the context', async () => {
    const terminal = vi.fn(async () => {});
    const ctx = contextOf();
    await compose([], terminal)(ctx);
    expect(terminal).toHaveBeenCalledTimes(1);
    expect(terminal).toHaveBeenCalledWith(ctx);
  });

  it('passes the same context object to every stage and the terminal', async () => {
    const seen: RequestContext[] = [];
    const stage: StageInstance = {
      name: 's',
      async handle(ctx, next) {
        seen.push(ctx);
        await next();
      },
    };
    const ctx = contextOf();
    await compose([stage, { ...stage, name: 't' }], async (c) => {
      seen.push(c);
    })(ctx);
    expect(seen).toHaveLength(3);
    for (const c of seen) expect(c).toBe(ctx);
  });

  it('next() may be called again once it settled (retry-style): inner stages and terminal run once per call', async () => {
    const trace: string[] = [];
    let terminalCalls = 0;
    const retry: StageInstance = {
      name: 'retry',
      async handle(_ctx, next) {
        for (let attempt = 1; attempt <= 3; attempt++) {
          try {
            await next();
            trace.push(`retry:ok@${attempt}`);
            return;
          } catch (err) {
            trace.push(`retry:caught ${(err as Error).message}`);
          }
        }
      },
    };
    const run = compose([retry, tracing('inner', trace)], async () => {
      terminalCalls++;
      trace.push(`terminal#${terminalCalls}`);
      if (terminalCalls < 3) throw new Error(`fail ${terminalCalls}`);
    });
    await run(contextOf());
    expect(terminalCalls).toBe(3);
    expect(trace).toEqual(['inner:in', 'terminal#1', 'retry:caught fail 1', 'inner:in', 'terminal#2', 'retry:caught fail 2', 'inner:in', 'terminal#3', 'inner:out', 'retry:ok@3']);
  });

  it('next() called while the previous call is still running rejects, naming the stage', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const terminal = vi.fn(() => gate);
    let second: Promise<void> | undefined;
    const eager: StageInstance = {
      name: 'eager',
      async handle(_ctx, next) {
        const first = next();
        second = next();
        await expect(second).rejects.toThrow('stage "eager" called next() while a previous call was still running');
        release();
        await first;
      },
    };
    await compose([eager], terminal)(contextOf());
    expect(terminal).toHaveBeenCalledTimes(1);
    expect(second).toBeDefined();
  });

  it('the guard is released when next() rejects, so a retry after a failure is allowed', async () => {
    let calls = 0;
    const stage: StageInstance = {
      name: 'retry',
      async handle(_ctx, next) {
        await expect(next()).rejects.toThrow('first');
        await next();
      },
    };
    await compose([stage], async () => {
      calls++;
      if (calls === 1) throw new Error('first');
    })(contextOf());
    expect(calls).toBe(2);
  });

  it('a stage that answers by throwing stops the inner stages and the terminal; outer stages see the error', async () => {
    const trace: string[] = [];
    const terminal = vi.fn(async () => {});
    const answer = new Error('401 from auth');
    const outer: StageInstance = {
      name: 'outer',
      async handle(_ctx, next) {
        trace.push('outer:in');
        try {
          await next();
        } catch (err) {
          trace.push(`outer:saw ${(err as Error).message}`);
          throw err;
        }
      },
    };
    const auth: StageInstance = {
      name: 'auth',
      async handle() {
        trace.push('auth:throws');
        throw answer;
      },
    };
    const run = compose([outer, auth, tracing('inner', trace)], terminal);
    await expect(run(contextOf())).rejects.toBe(answer);
    expect(trace).toEqual(['outer:in', 'auth:throws', 'outer:saw 401 from auth']);
    expect(terminal).not.toHaveBeenCalled();
  });

  it('a stage that returns without calling next() short-circuits the rest', async () => {
    const terminal = vi.fn(async () => {});
    const inner = vi.fn(async (_ctx: RequestContext, next: Next) => next());
    const run = compose(
      [
        { name: 'cache', handle: async () => {} },
        { name: 'inner', handle: inner },
      ],
      terminal,
    );
    await run(contextOf());
    expect(inner).not.toHaveBeenCalled();
    expect(terminal).not.toHaveBeenCalled();
  });

  it('a composed runner can be used for many requests; each run starts at the first stage', async () => {
    const trace: string[] = [];
    const run = compose([tracing('a', trace)], async (ctx) => {
      trace.push(`terminal ${ctx.id}`);
    });
    await run({ ...contextOf(), id: 'one' } as RequestContext);
    await run({ ...contextOf(), id: 'two' } as RequestContext);
    expect(trace).toEqual(['a:in', 'terminal one', 'a:out', 'a:in', 'terminal two', 'a:out']);
  });
});

describe('composeOnResponse', () => {
  it('runs every onResponse hook in pipeline order, skipping stages without one, and awaits async hooks', async () => {
    const order: string[] = [];
    const run = composeOnResponse([
      { name: 'a', onResponse: () => void order.push('a') },
      { name: 'no-hook', handle: async () => {} },
      {
        name: 'b',
        onResponse: async () => {
          await Promise.resolve();
          order.push('b');
        },
      },
      { name: 'c', onResponse: () => void order.push('c') },
    ]);
    await run(contextOf(), OUTCOME);
    expect(order).toEqual(['a', 'b', 'c']);
  });

  it('a failing hook is logged with its stage and request id, does not throw, and later hooks still run', async () => {
    const log = spiedLog();
    const boom = new Error('hook broke');
    const after = vi.fn();
    const run = composeOnResponse([
      {
        name: 'metrics',
        onResponse: async () => {
          throw boom;
        },
      },
      {
        name: 'sync-thrower',
        onResponse: () => {
          throw new Error('sync');
        },
      },
      { name: 'after', onResponse: after },
    ]);
    await expect(run(contextOf(log), OUTCOME)).resolves.toBeUndefined();
    expect(after).toHaveBeenCalledTimes(1);
    expect(log.error).toHaveBeenCalledTimes(2);
    expect(log.error).toHaveBeenNthCalledWith(1, { err: boom, stage: 'metrics', reqId: 'req_1' }, 'onResponse hook failed');
    expect(log.error.mock.calls[1][0]).toMatchObject({ stage: 'sync-thrower', reqId: 'req_1', err: expect.objectContaining({ message: 'sync' }) });
  });

  it('runs hooks that return nothing in one synchronous pass, before any await', async () => {
    const order: string[] = [];
    const run = composeOnResponse([
      { name: 'a', onResponse: () => void order.push('a') },
      { name: 'b', onResponse: () => void order.push('b') },
    ]);
    const done = run(contextOf(), OUTCOME);
    expect(order).toEqual(['a', 'b']);
    await expect(done).resolves.toBeUndefined();
  });

  it('with no hooks resolves without touching the log', async () => {
    const log = spiedLog();
    await composeOnResponse([{ name: 'x', handle: async () => {} }])(contextOf(log), OUTCOME);
    expect(log.error).not.toHaveBeenCalled();
  });
});
