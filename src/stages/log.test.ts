/** `log`: one line per request from the context and its outcome; warn for failures; nothing the client chose unredacted. */
import { describe, expect, it, vi } from 'vitest';
import { GatewayError } from '../errors.ts';
import { FakeClock } from '../kit/testing/clock.ts';
import { answering, chatBody, exchangeFor, keyOf, routeOf, runtimeOf, sessionOf, silentLog, stageEnv, targetOf } from '../pipeline/testing.ts';
import type { AttemptRecord, Operation, RequestOutcome } from '../plugin-api.ts';
import log, { requestLogLine } from './log.ts';

const OK: AttemptRecord = { provider: 'acme', model: 'acme-1', status: 200, outcome: 'ok', durationMs: 80 };

function outcomeOf(extra: Partial<RequestOutcome> = {}): RequestOutcome {
  return {
    status: 200,
    stream: false,
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    costUsd: 0.000123,
    error: undefined,
    errorInStream: false,
    attempts: [OK],
    provider: 'acme',
    upstreamModel: 'acme-1-2025',
    refusal: undefined,
    timing: { durationMs: 100.123, upstreamMs: 80.456, overheadMs: 19.667, firstChunkMs: undefined },
    traceId: undefined,
    ...extra,
  };
}

const M = routeOf('m', [targetOf(answering('m'))]);

/** A request to `model`, routed when it is an alias, by alice of team search. */
function contextFor(model: string, options: { operation?: Operation; ingress?: string; stream?: boolean } = {}) {
  const x = exchangeFor({ operation: options.operation, ingress: options.ingress, session: sessionOf(chatBody({ model, stream: options.stream })) });
  x.ctx.key = keyOf('alice', { team: 'search' });
  if (model === 'm') x.ctx.route = M;
  return x.ctx;
}

describe('requestLogLine', () => {
  it('names the fields dropped, and has no dropped field when none was', () => {
    const dropped = [
      { field: 'context_management', reason: 'r' },
      { field: 'tools[3]', what: 'web_search', reason: 'r' },
    ];
    expect(requestLogLine(contextFor('m'), outcomeOf({ dropped })).dropped).toEqual(['context_management', 'tools[3]']);
    expect(requestLogLine(contextFor('m'), outcomeOf())).not.toHaveProperty('dropped');
  });

  it('a successful request: ids, key, models, status, tokens, cost, rounded times, and no attempt log', () => {
    expect(requestLogLine(contextFor('m'), outcomeOf())).toEqual({
      reqId: 'req_test',
      key: 'alice',
      team: 'search',
      model: 'm',
      provider: 'acme',
      upstreamModel: 'acme-1-2025',
      status: 200,
      stream: false,
      promptTokens: 10,
      completionTokens: 5,
      totalTokens: 15,
      durationMs: 100.12,
      attempts: 1,
      upstreamMs: 80.46,
      overheadMs: 19.67,
      costUsd: 0.000123,
    });
  });

  it('redacts a model name that is not a configured alias (it could be anything the client sent)', () => {
    const redact = (t: string) => t.replaceAll('sk-live-123', '[redacted]');
    expect(requestLogLine(contextFor('sk-live-123'), outcomeOf({ status: 404 }), redact).model).toBe('[redacted]');
    expect(requestLogLine(contextFor('m'), outcomeOf(), () => 'never').model).toBe('m');
  });

  it('keeps the attempt log when there were several attempts or a failed one; skipped ones are not counted as tried', () => {
    const skipped: AttemptRecord = { provider: 'b', model: 'b-1', status: 0, outcome: 'skipped', durationMs: 0, error: 'cooling down for 100 ms' };
    const line = requestLogLine(contextFor('m'), outcomeOf({ attempts: [skipped, OK] }));
    expect(line.attempts).toBe(1);
    expect(line.attemptLog).toEqual([skipped, OK]);
  });

  it('an error: its code and message; in a stream, flagged', () => {
    const error = new GatewayError('timeout', 'acme: the answer stalled');
    const line = requestLogLine(contextFor('m', { stream: true }), outcomeOf({ status: 200, stream: true, error, errorInStream: true }));
    expect(line).toMatchObject({ error: 'timeout', errorMessage: 'acme: the answer stalled', streamError: true, stream: true });
    const http = requestLogLine(contextFor('m'), outcomeOf({ status: 504, error }));
    expect(http).toMatchObject({ error: 'timeout', status: 504 });
    expect(http).not.toHaveProperty('streamError');
  });

  it('a null cost (unknown price) is logged as null, an undefined one not at all', () => {
    expect(requestLogLine(contextFor('m'), outcomeOf({ costUsd: null })).costUsd).toBeNull();
    expect(requestLogLine(contextFor('m'), outcomeOf({ costUsd: undefined }))).not.toHaveProperty('costUsd');
  });

  it('names the way in, count_tokens, time to first token and the trace when they apply', () => {
    const line = requestLogLine(
      contextFor('m', { operation: 'count_tokens', ingress: 'messages' }),
      outcomeOf({ traceId: 'abc', timing: { durationMs: 5, upstreamMs: 1, overheadMs: 4, firstChunkMs: 2.345 } }),
    );
    expect(line).toMatchObject({ ingress: 'messages', operation: 'count_tokens', traceId: 'abc', ttftMs: 2.35 });
    const chat = requestLogLine(contextFor('m'), outcomeOf());
    expect(chat).not.toHaveProperty('ingress');
    expect(chat).not.toHaveProperty('operation');
    expect(chat).not.toHaveProperty('ttftMs');
    expect(chat).not.toHaveProperty('traceId');
  });
});

describe('the log stage', () => {
  async function logged(outcome: RequestOutcome) {
    const logger = silentLog();
    const info = vi.spyOn(logger, 'info');
    const warn = vi.spyOn(logger, 'warn');
    const stage = await log.create(
      {},
      stageEnv(
        runtimeOf([M], {}, (t) => t.replaceAll('hidden', '***')),
        new FakeClock(),
        logger,
      ),
    );
    await stage.onResponse!(contextFor('hidden-model'), outcome);
    return { info, warn };
  }

  it('writes a success at info, with the runtime redaction applied', async () => {
    const { info, warn } = await logged(outcomeOf());
    expect(info).toHaveBeenCalledWith(expect.objectContaining({ reqId: 'req_test', model: '***-model', status: 200 }), 'request');
    expect(warn).not.toHaveBeenCalled();
  });

  it('writes a 5xx or a stream that failed at warn', async () => {
    const failed = await logged(outcomeOf({ status: 502, error: new GatewayError('upstream_error', 'bad') }));
    expect(failed.warn).toHaveBeenCalledWith(expect.objectContaining({ status: 502, error: 'upstream_error' }), 'request failed');
    expect(failed.info).not.toHaveBeenCalled();
    const inStream = await logged(outcomeOf({ status: 200, error: new GatewayError('timeout', 'stalled'), errorInStream: true }));
    expect(inStream.warn).toHaveBeenCalledTimes(1);
    const client = await logged(outcomeOf({ status: 400, error: new GatewayError('invalid_request', 'bad') }));
    expect(client.info).toHaveBeenCalledTimes(1);
  });
});
