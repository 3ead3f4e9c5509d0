/** The core's per-request object: the one end-of-request order, the outcome hooks read, and the stage view's read-only fields. */
import { describe, expect, it, vi } from 'vitest';
import { GatewayError } from '../errors.ts';
import type { AttemptRecord, RequestContext, RequestOutcome } from '../plugin-api.ts';
import { Attempt } from './attempt.ts';
import { exchangeOf, type ExchangeEnd } from './exchange.ts';
import { answering, chatBody, exchangeFor, sessionOf, silentLog, targetOf, TIMEOUTS } from './testing.ts';

/** An end whose every step records itself (the settle waits a turn, as a store would). */
function recordingEnd(trace: string[], settle: ExchangeEnd['settle'] = async () => void trace.push('settle')): ExchangeEnd {
  return {
    released: () => void trace.push('released'),
    settle: async (x) => {
      await new Promise((resolve) => setImmediate(resolve));
      await settle?.(x);
    },
    hooks: async () => void trace.push('hooks'),
    observed: () => void trace.push('observed'),
  };
}

describe('Exchange.end', () => {
  it('releases, then settles, then runs the hooks, then tells the observers', async () => {
    const trace: string[] = [];
    const x = exchangeFor({ session: sessionOf(chatBody()) });
    await x.end(recordingEnd(trace));
    expect(trace).toEqual(['released', 'settle', 'hooks', 'observed']);
  });

  it('runs once only, even when called twice at once or again later', async () => {
    const trace: string[] = [];
    const x = exchangeFor({ session: sessionOf(chatBody()) });
    const end = recordingEnd(trace);
    await Promise.all([x.end(end), x.end(end)]);
    await x.end(end);
    expect(trace).toEqual(['released', 'settle', 'hooks', 'observed']);
  });

  it("closes the current attempt before anything else (the target's in-flight count is back first)", async () => {
    const x = exchangeFor({ session: sessionOf(chatBody()) });
    const target = targetOf(answering('hi'));
    new Attempt(x, target, TIMEOUTS);
    let inFlightAtRelease = -1;
    await x.end({ released: () => void (inFlightAtRelease = target.state.inFlight), hooks: async () => {} });
    expect(inFlightAtRelease).toBe(0);
  });

  it('logs a failing settle with the request id, and the hooks and observers still run with the outcome', async () => {
    const log = silentLog();
    const error = vi.spyOn(log, 'error');
    const x = exchangeFor({ session: sessionOf(chatBody()), log });
    const broken = new Error('store exploded');
    const trace: string[] = [];
    let seen: { ctx: RequestContext; outcome: RequestOutcome } | undefined;
    await x.end({
      released: () => void trace.push('released'),
      settle: async () => {
        throw broken;
      },
      hooks: async (ctx, outcome) => {
        trace.push('hooks');
        seen = { ctx, outcome };
      },
      observed: () => void trace.push('observed'),
    });
    expect(trace).toEqual(['released', 'hooks', 'observed']);
    expect(error).toHaveBeenCalledWith({ err: broken, reqId: 'req_test' }, 'settling limits and spend failed');
    expect(seen?.ctx).toBe(x.ctx);
    expect(seen?.outcome.status).toBe(0);
  });

  it('without a settle step (no state backend) goes straight to the hooks', async () => {
    const trace: string[] = [];
    const x = exchangeFor();
    await x.end({ released: () => void trace.push('released'), hooks: async () => void trace.push('hooks') });
    expect(trace).toEqual(['released', 'hooks']);
  });
});

describe('Exchange.outcome', () => {
  it('says how the request ended: status, usage, cost, attempts, provider, model, refusal, timing, trace', async () => {
    const x = exchangeFor({ session: sessionOf(chatBody({ stream: true })) });
    const attempt = new Attempt(x, targetOf(answering('hi'), { provider: 'acme' }), TIMEOUTS);
    await attempt.send();
    attempt.translate();
    await attempt.complete();
    x.status = 200;
    x.usage = { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 };
    x.costUsd = null;
    x.refusal = { scope: 'key:k', kind: 'tokens' };
    x.traceId = 'trace-1';
    x.timing.upstreamMs = 40;
    x.timing.firstChunkMs = 12;
    const outcome = x.outcome(x.startedAt + 100);
    expect(outcome).toEqual({
      status: 200,
      stream: true,
      usage: x.usage,
      costUsd: null,
      error: undefined,
      errorInStream: false,
      attempts: [...x.attempts],
      provider: 'acme',
      upstreamModel: 'acme-1',
      refusal: { scope: 'key:k', kind: 'tokens' },
      // (startedAt + 100) - startedAt is 100 only up to floating point.
      timing: { durationMs: expect.closeTo(100, 6), upstreamMs: 40, overheadMs: expect.closeTo(60, 6), firstChunkMs: 12 },
      traceId: 'trace-1',
    });
    expect(Object.isFrozen(outcome)).toBe(true);
    expect(Object.isFrozen(outcome.timing)).toBe(true);
  });

  it('an error in a started stream is the error, reported as in-stream; overhead never negative', () => {
    const x = exchangeFor({ session: sessionOf(chatBody()) });
    x.error = new GatewayError('internal_error', 'http');
    x.streamError = new GatewayError('timeout', 'in stream');
    x.timing.upstreamMs = 500;
    const outcome = x.outcome(x.startedAt + 100);
    expect(outcome.error).toBe(x.streamError);
    expect(outcome.errorInStream).toBe(true);
    expect(outcome.timing.overheadMs).toBe(0);
    expect(outcome.stream).toBe(false);
    expect(outcome.provider).toBeUndefined();
  });

  it('a token count is never a stream, whatever its body says', () => {
    const x = exchangeFor({ operation: 'count_tokens', session: sessionOf(chatBody({ stream: true })) });
    expect(x.outcome().stream).toBe(false);
  });

  it('counts the attempts that reached a provider, not the skipped ones', () => {
    const x = exchangeFor();
    x.attempts.push({ provider: 'a', model: 'm', status: 0, outcome: 'skipped', durationMs: 0 }, { provider: 'b', model: 'm', status: 500, outcome: 'error', durationMs: 1 });
    expect(x.triedCount).toBe(1);
  });
});

describe('the stage view (ctx)', () => {
  it("is the exchange's: its core fields read the exchange, its body is the session's once begun", () => {
    const x = exchangeFor({ ingress: 'messages', headers: { 'x-test': '1' }, body: { model: 'raw' } });
    const ctx = x.ctx;
    expect(ctx.body).toEqual({ model: 'raw' });
    const session = sessionOf(chatBody());
    x.begin(session);
    expect(ctx.body).toBe(session.body);
    expect(x.body).toBe(session.body);
    expect([ctx.id, ctx.operation, ctx.ingress, ctx.startedAt, ctx.headers, ctx.signal, ctx.log]).toEqual([x.id, 'chat', 'messages', x.startedAt, x.headers, x.signal, x.log]);
    expect(ctx.responseHeaders).toBe(x.responseHeaders);
    expect(ctx.attempts).toEqual(x.attempts);
    const attempt = new Attempt(x, targetOf(answering('hi')), TIMEOUTS);
    expect(ctx.attempt).toBe(attempt);
    expect(exchangeOf(ctx)).toBe(x);
  });

  it('refuses assignments to the core fields from plain JavaScript (strict mode: TypeError)', () => {
    const x = exchangeFor({ session: sessionOf(chatBody()) });
    const ctx = x.ctx;
    expect(() => Object.assign(ctx, { attempt: undefined })).toThrow(TypeError);
    expect(() => Object.assign(ctx, { attempts: [] })).toThrow(TypeError);
    expect(() => Object.assign(ctx, { id: 'forged' })).toThrow(TypeError);
    expect(() => Object.assign(ctx, { responseHeaders: {} })).toThrow(TypeError);
    expect(ctx.id).toBe('req_test');
    expect(ctx.attempts).toEqual(x.attempts);
    // A stage's own fields stay writable.
    Object.assign(ctx, { key: undefined, route: undefined, body: chatBody({ model: 'other' }) });
    expect(x.body.model).toBe('other');
  });

  // GAP (src/pipeline/exchange.ts, StageContext.attempts and outcome()): both hand stages the
  // core's own attempts array, so a JavaScript stage that edits it in place (sorting it for its
  // own report, say) changes what the observers (metrics, traces) read after the hooks. The
  // contract says a stage reads the bookkeeping and cannot change it.
  it("a stage editing the attempt log it was given does not change the core's", async () => {
    const x = exchangeFor({ session: sessionOf(chatBody()) });
    const tried: AttemptRecord = { provider: 'a', model: 'm', status: 500, outcome: 'error', durationMs: 1 };
    const served: AttemptRecord = { provider: 'b', model: 'm', status: 200, outcome: 'ok', durationMs: 2 };
    x.attempts.push(tried, served);
    let observed: unknown[] = [];
    await x.end({
      released: () => {},
      hooks: async (ctx, outcome) => {
        for (const list of [ctx.attempts, outcome.attempts]) {
          try {
            Object.assign(list, { 0: served, 1: tried });
          } catch {
            // Refused (frozen): what the contract promises.
          }
        }
      },
      observed: (view) => void (observed = [...view.attempts]),
    });
    expect(observed).toEqual([tried, served]);
  });

  it('exchangeOf refuses a context the gateway did not make', () => {
    const fake: RequestContext = {
      body: chatBody(),
      id: 'x',
      operation: 'chat',
      ingress: 'chat',
      startedAt: 0,
      headers: {},
      signal: new AbortController().signal,
      log: silentLog(),
      attempt: undefined,
      attempts: [],
      responseHeaders: {},
      transformAnswer: () => {},
      annotate: () => {},
    };
    expect(() => exchangeOf(fake)).toThrow(TypeError);
  });

  it('its signal aborts when the client leaves before the response is complete', () => {
    const x = exchangeFor();
    expect(x.ctx.signal.aborted).toBe(false);
    x.res.emit('close');
    expect(x.ctx.signal.aborted).toBe(true);
  });
});
