/** One try against one target: its time limits, priming, bookkeeping, interruption, pass-through and token counts. */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { GatewayError } from '../errors.ts';
import type { ChatCompletionChunk } from '../openai-types.ts';
import type { NativeRequest } from '../plugin-api.ts';
import { UpstreamError } from '../providers/upstream-error.ts';
import { TargetState } from '../routing/target-state.ts';
import { Attempt } from './attempt.ts';
import { answering, chatBody, chunkOf, completionOf, exchangeFor, fakeProvider, routeOf, sessionOf, sleepFor, targetOf, timedEvents, TIMEOUTS } from './testing.ts';

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

/** Reads a stream to its end, or to its failure (returned). */
async function drain(chunks: AsyncIterable<ChatCompletionChunk>): Promise<{ texts: string[]; error: unknown }> {
  const texts: string[] = [];
  try {
    for await (const c of chunks) texts.push(String(c.choices[0]?.delta.content ?? ''));
    return { texts, error: undefined };
  } catch (error) {
    return { texts, error };
  }
}

/** The attempt's stream once primed (complete() resolved to a stream). */
async function primedStream(attempt: Attempt): Promise<AsyncIterable<ChatCompletionChunk>> {
  const response = await attempt.complete();
  if (response.kind !== 'stream') throw new Error(`expected a stream, got ${response.kind}`);
  return response.chunks;
}

const streamingSession = () => sessionOf(chatBody({ stream: true }));

describe('Attempt: the total limit', () => {
  it('ends a send slower than timeouts.totalMs as an UpstreamError timeout, recorded once', async () => {
    // A provider that waits longer than the limit, and gives up when its call is aborted (as undici does).
    const provider = fakeProvider(async (call) => {
      await sleepFor(60_000, call.signal);
      return { kind: 'json', body: completionOf('late'), headers: {} };
    });
    const x = exchangeFor({ session: sessionOf(chatBody()) });
    const target = targetOf(provider);
    const attempt = new Attempt(x, target, TIMEOUTS);
    const sent = attempt.send().then(
      () => undefined,
      (err: unknown) => err,
    );
    await vi.advanceTimersByTimeAsync(TIMEOUTS.totalMs - 1);
    expect(attempt.signal.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    const thrown = await sent;
    expect(attempt.signal.aborted).toBe(true);
    const err = attempt.fail(thrown);
    expect(err).toBeInstanceOf(UpstreamError);
    expect(err).toMatchObject({ kind: 'timeout', provider: 'acme', status: 0 });
    expect(String((err as Error).message)).toContain(`no answer within ${TIMEOUTS.totalMs} ms`);
    expect(x.attempts).toEqual([expect.objectContaining({ provider: 'acme', model: 'acme-1', status: 0, outcome: 'error' })]);
    expect(target.state.inFlight).toBe(0);
  });

  it('does not fire once the answer is complete', async () => {
    const x = exchangeFor({ session: sessionOf(chatBody()) });
    const attempt = new Attempt(x, targetOf(answering('hi')), TIMEOUTS);
    await attempt.send();
    attempt.translate();
    await attempt.complete();
    await vi.advanceTimersByTimeAsync(TIMEOUTS.totalMs * 5);
    expect(attempt.signal.aborted).toBe(false);
  });
});

describe('Attempt: the idle limit between stream events', () => {
  it('lets events that each come within idleMs through, and fails a gap longer than idleMs as a timeout', async () => {
    const gap = TIMEOUTS.idleMs - 100;
    const provider = fakeProvider(async (call) => ({
      kind: 'stream',
      headers: {},
      events: timedEvents(call.signal, [
        { afterMs: 10, event: chunkOf('a') },
        { afterMs: gap, event: chunkOf('b') },
        { afterMs: gap, event: chunkOf('c') },
        { afterMs: TIMEOUTS.idleMs + 1000, event: chunkOf('never') },
      ]),
    }));
    const x = exchangeFor({ session: streamingSession() });
    const attempt = new Attempt(x, targetOf(provider), TIMEOUTS);
    await attempt.send();
    attempt.translate();
    const primed = primedStream(attempt);
    await vi.advanceTimersByTimeAsync(10);
    const drained = drain(await primed);
    // Past totalMs overall, but the total limit stopped at the first chunk: only the gaps count.
    await vi.advanceTimersByTimeAsync(2 * gap + TIMEOUTS.idleMs);
    const { texts, error } = await drained;
    expect(texts).toEqual(['a', 'b', 'c']);
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({ kind: 'timeout' });
    expect(String((error as Error).message)).toContain(`stalled for ${TIMEOUTS.idleMs} ms`);
  });
});

describe('Attempt: the idle limit and a slow reader', () => {
  // BUG (src/pipeline/attempt.ts, #translateStream): the idle timer is refreshed only when the
  // next upstream event is read, and keeps running while the generator is suspended at `yield`,
  // so a client that reads slower than timeout.idleMs (a full socket, the writer waiting for
  // 'drain') aborts a healthy upstream, and the stream fails as "the answer stalled", blamed on
  // the provider.
  it('does not count the time the reader takes between chunks as upstream idleness', async () => {
    const provider = fakeProvider(async (call) => ({
      kind: 'stream',
      headers: {},
      events: timedEvents(call.signal, [
        { afterMs: 0, event: chunkOf('a') },
        { afterMs: 0, event: chunkOf('b') },
      ]),
    }));
    const x = exchangeFor({ session: streamingSession() });
    const attempt = new Attempt(x, targetOf(provider), TIMEOUTS);
    await attempt.send();
    attempt.translate();
    const primed = primedStream(attempt);
    await vi.advanceTimersByTimeAsync(0);
    const it = (await primed)[Symbol.asyncIterator]();
    expect((await it.next()).value).toMatchObject({ choices: [{ delta: { content: 'a' } }] });
    // The reader is busy for longer than the idle limit; the upstream answers as soon as it is asked.
    await vi.advanceTimersByTimeAsync(TIMEOUTS.idleMs * 2);
    const second = it.next().then(
      (r) => r.value,
      (err: unknown) => err,
    );
    await vi.advanceTimersByTimeAsync(0);
    expect(await second).toMatchObject({ choices: [{ delta: { content: 'b' } }] });
  });
});

describe('Attempt: priming a stream', () => {
  it('fails the attempt when the first event already fails: nothing was committed, the failure is the upstream one', async () => {
    const failure = UpstreamError.http('acme', 500, { message: 'overloaded' });
    const provider = fakeProvider(async () => ({
      kind: 'stream',
      headers: {},
      events: (async function* () {
        yield* [];
        throw failure;
      })(),
    }));
    const x = exchangeFor({ session: streamingSession() });
    const target = targetOf(provider);
    const attempt = new Attempt(x, target, TIMEOUTS);
    await attempt.send();
    attempt.translate();
    await expect(attempt.complete()).rejects.toBe(failure);
    expect(x.attempts).toEqual([expect.objectContaining({ outcome: 'error', status: 500 })]);
    expect(target.state.inFlight).toBe(0);
    expect(x.timing.firstChunkMs).toBeUndefined();
  });

  it('fails the attempt when the first event cannot be translated: a 502 protocol fault, not the client', async () => {
    const provider = fakeProvider(async () => ({
      kind: 'stream',
      headers: {},
      events: (async function* () {
        yield { type: 'garbage' };
      })(),
    }));
    const x = exchangeFor({ session: streamingSession() });
    const attempt = new Attempt(x, targetOf(provider), TIMEOUTS);
    await attempt.send();
    attempt.translate();
    const err = await attempt.complete().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UpstreamError);
    expect(err).toMatchObject({ kind: 'protocol' });
    expect(x.attempts.map((a) => a.outcome)).toEqual(['error']);
  });

  it('completes once the first chunk exists, replays it, and keeps the target held until closed', async () => {
    const provider = fakeProvider(async () => ({
      kind: 'stream',
      headers: {},
      events: (async function* () {
        yield chunkOf('one');
        yield chunkOf('two');
      })(),
    }));
    const x = exchangeFor({ session: streamingSession() });
    const target = targetOf(provider);
    const attempt = new Attempt(x, target, TIMEOUTS);
    await attempt.send();
    attempt.translate();
    const chunks = await primedStream(attempt);
    expect(x.attempts).toEqual([expect.objectContaining({ outcome: 'ok', status: 200 })]);
    expect(target.state.inFlight).toBe(1);
    expect((await drain(chunks)).texts).toEqual(['one', 'two']);
    attempt.close();
    expect(target.state.inFlight).toBe(0);
  });
});

describe('Attempt: bookkeeping', () => {
  it('a success: one ok record, recordSuccess once, in-flight up then down once, however often complete() and close() are called', async () => {
    const x = exchangeFor({ session: sessionOf(chatBody()) });
    const target = targetOf(answering('hi'));
    const success = vi.spyOn(target.state, 'recordSuccess');
    const attempt = new Attempt(x, target, TIMEOUTS);
    expect(target.state.inFlight).toBe(1);
    expect(x.attempt).toBe(attempt);
    expect(attempt.number).toBe(1);
    await attempt.send();
    attempt.translate();
    const [a, b] = await Promise.all([attempt.complete(), attempt.complete()]);
    expect(a).toBe(b);
    expect(a).toMatchObject({ kind: 'completion', body: { choices: [{ message: { content: 'hi' } }] } });
    attempt.close();
    attempt.close();
    expect(target.state.inFlight).toBe(0);
    expect(success).toHaveBeenCalledTimes(1);
    expect(x.attempts).toEqual([expect.objectContaining({ provider: 'acme', model: 'acme-1', status: 200, outcome: 'ok' })]);
    expect(x.usage).toMatchObject({ prompt_tokens: 10, completion_tokens: 2 });
    expect(x.upstreamModel).toBe('acme-1');
  });

  it('a failure: one error record with the redacted message and the upstream status; in-flight down once; the next attempt is number 2', async () => {
    const provider = fakeProvider(async () => {
      throw UpstreamError.http('acme', 503, { message: 'upstream said sk-live-SECRET is wrong' });
    });
    const x = exchangeFor({ session: sessionOf(chatBody()), services: { redact: (t) => t.replaceAll('sk-live-SECRET', '[redacted]') } });
    const target = targetOf(provider);
    const success = vi.spyOn(target.state, 'recordSuccess');
    const attempt = new Attempt(x, target, TIMEOUTS);
    const thrown = await attempt.send().catch((e: unknown) => e);
    expect(attempt.fail(thrown)).toBe(thrown);
    expect(attempt.fail(thrown)).toBe(thrown);
    attempt.close();
    expect(target.state.inFlight).toBe(0);
    expect(success).not.toHaveBeenCalled();
    expect(x.attempts).toHaveLength(1);
    expect(x.attempts[0]).toMatchObject({ status: 503, outcome: 'error', error: 'acme: upstream said [redacted] is wrong' });
    expect(JSON.stringify(x.attempts)).not.toContain('SECRET');
    expect(new Attempt(x, target, TIMEOUTS).number).toBe(2);
  });

  it('tells the observer when it starts (its headers go upstream) and ends', async () => {
    const started = vi.fn(() => ({ traceparent: '00-abc-def-01' }));
    const ended = vi.fn();
    const provider = answering('hi');
    const x = exchangeFor({ session: sessionOf(chatBody()), services: { observer: { attemptStarted: started, attemptEnded: ended } } });
    const attempt = new Attempt(x, targetOf(provider), TIMEOUTS);
    await attempt.send();
    attempt.translate();
    await attempt.complete();
    expect(started).toHaveBeenCalledWith(x, attempt);
    expect(provider.calls[0]?.traceHeaders).toEqual({ traceparent: '00-abc-def-01' });
    expect(ended).toHaveBeenCalledWith(x, attempt, x.attempts[0]);
  });
});

describe('Attempt: interruption and the client leaving', () => {
  it('interrupt() fails a running stream with the reason given', async () => {
    const provider = fakeProvider(async (call) => ({
      kind: 'stream',
      headers: {},
      events: timedEvents(call.signal, [
        { afterMs: 0, event: chunkOf('first') },
        { afterMs: 100, event: chunkOf('second') },
      ]),
    }));
    const x = exchangeFor({ session: streamingSession() });
    const attempt = new Attempt(x, targetOf(provider), TIMEOUTS);
    await attempt.send();
    attempt.translate();
    const primed = primedStream(attempt);
    await vi.advanceTimersByTimeAsync(0);
    const drained = drain(await primed);
    const reason = new GatewayError('provider_unavailable', 'the gateway is shutting down');
    attempt.interrupt(reason);
    const { texts, error } = await drained;
    expect(texts).toEqual(['first']);
    expect(error).toBe(reason);
    expect(attempt.fail(new Error('anything'))).toBe(reason);
  });

  it('the client leaving aborts the attempt with the client signal reason, not as a timeout', async () => {
    const provider = fakeProvider(async (call) => {
      await sleepFor(60_000, call.signal);
      return { kind: 'json', body: completionOf('late'), headers: {} };
    });
    const x = exchangeFor({ session: sessionOf(chatBody()) });
    const target = targetOf(provider);
    const attempt = new Attempt(x, target, TIMEOUTS);
    const sent = attempt.send().catch((e: unknown) => e);
    x.res.emit('close');
    const thrown = await sent;
    expect(x.signal.aborted).toBe(true);
    expect(attempt.signal.aborted).toBe(true);
    expect(attempt.signal.reason).toBe(x.signal.reason);
    expect(thrown).toBe(x.signal.reason);
    const err = attempt.fail(thrown);
    expect(err).toBe(thrown);
    expect(x.attempts).toEqual([expect.objectContaining({ outcome: 'error', status: 0 })]);
    expect(target.state.inFlight).toBe(0);
  });

  // BUG (src/pipeline/attempt.ts, constructor): the attempt listens for the exchange's 'abort'
  // event but never checks `x.signal.aborted`, so a client that left before the attempt started
  // (during admission, or before the pipeline reached the attempt) still gets a live provider
  // call: the upstream generates (and bills) an answer nobody will read.
  it('an attempt started after the client left is aborted at once, and its provider is not called with a live signal', async () => {
    const provider = answering('unread');
    const x = exchangeFor({ session: sessionOf(chatBody()) });
    x.res.emit('close');
    expect(x.signal.aborted).toBe(true);
    const attempt = new Attempt(x, targetOf(provider), TIMEOUTS);
    await attempt.send().catch(() => undefined);
    expect(attempt.signal.aborted).toBe(true);
    expect(provider.calls.every((call) => call.signal.aborted)).toBe(true);
  });

  it('a client leaving after the total limit fired is not reported as a timeout', async () => {
    const provider = fakeProvider(async (call) => {
      await sleepFor(60_000, call.signal);
      return { kind: 'json', body: completionOf('late'), headers: {} };
    });
    const x = exchangeFor({ session: sessionOf(chatBody()) });
    const attempt = new Attempt(x, targetOf(provider), TIMEOUTS);
    const sent = attempt.send().catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(TIMEOUTS.totalMs);
    x.res.emit('close');
    const err = attempt.fail(await sent);
    expect(err).not.toBeInstanceOf(UpstreamError);
  });
});

const MESSAGES: NativeRequest = {
  protocol: 'anthropic-messages',
  body: { model: 'alias', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] },
  headers: { 'anthropic-version': '2023-06-01' },
};

describe('Attempt: native pass-through', () => {
  it('hands a target that speaks the client protocol the client body (call.native), and its native events in order', async () => {
    const events = [chunkOf('a'), chunkOf('b'), chunkOf('c')];
    const provider = fakeProvider(async () => ({
      kind: 'stream',
      headers: {},
      events: (async function* () {
        yield* events;
      })(),
    }));
    const x = exchangeFor({ ingress: 'messages', session: sessionOf(chatBody({ stream: true }), { native: MESSAGES }) });
    const attempt = new Attempt(x, targetOf(provider, { capabilities: { nativeProtocols: ['anthropic-messages'] } }), TIMEOUTS);
    await attempt.send();
    expect(attempt.passthrough).toBe(true);
    expect(provider.calls[0]?.native).toBe(MESSAGES);
    attempt.translate();
    const it = (await primedStream(attempt))[Symbol.asyncIterator]();
    await it.next();
    expect(attempt.takeNativeEvents()).toEqual([events[0]]);
    await it.next();
    await it.next();
    expect(attempt.takeNativeEvents()).toEqual([events[1], events[2]]);
    expect(attempt.takeNativeEvents()).toEqual([]);
  });

  it('translates for a target that does not speak it (no call.native, nothing kept)', async () => {
    const provider = answering('hi');
    const x = exchangeFor({ ingress: 'messages', session: sessionOf(chatBody(), { native: MESSAGES }) });
    const attempt = new Attempt(x, targetOf(provider), TIMEOUTS);
    await attempt.send();
    expect(attempt.passthrough).toBe(false);
    expect(provider.calls[0]?.native).toBeUndefined();
    expect(attempt.takeNativeEvents()).toEqual([]);
  });

  it('translates when a stage edited or replaced the request: the client body no longer says what the pipeline runs', async () => {
    const speaks = { capabilities: { nativeProtocols: ['anthropic-messages'] } };
    const edited = answering('hi');
    const x = exchangeFor({ ingress: 'messages', session: sessionOf(chatBody(), { native: MESSAGES }) });
    (x.ctx.body as { max_completion_tokens?: number }).max_completion_tokens = 64;
    const a = new Attempt(x, targetOf(edited, speaks), TIMEOUTS);
    await a.send();
    expect(a.passthrough).toBe(false);
    expect(edited.calls[0]?.native).toBeUndefined();
    expect(edited.calls[0]?.request).toMatchObject({ max_completion_tokens: 64 });
    const replaced = answering('hi');
    const y = exchangeFor({ ingress: 'messages', session: sessionOf(chatBody(), { native: MESSAGES }) });
    y.ctx.body = { ...y.ctx.body };
    const b = new Attempt(y, targetOf(replaced, speaks), TIMEOUTS);
    await b.send();
    expect(b.passthrough).toBe(false);
  });

  it('refuses a request with native-only parts for a target that would need a translation, without calling it', async () => {
    const refusal = new GatewayError('invalid_request', 'this content block type has no chat translation');
    const provider = answering('hi');
    const x = exchangeFor({ ingress: 'messages', session: sessionOf(chatBody(), { native: { ...MESSAGES, unservable: [refusal] } }) });
    const attempt = new Attempt(x, targetOf(provider), TIMEOUTS);
    await expect(attempt.send()).rejects.toBe(refusal);
    expect(provider.calls).toHaveLength(0);
  });

  it("drops the native protocol's untranslatable parts for a translating target, and keeps them for a native one", async () => {
    const drop = { field: 'context_management', reason: 'only an Anthropic model serves it' };
    const native = { ...MESSAGES, untranslatable: [drop] };
    const translating = new Attempt(exchangeFor({ ingress: 'messages', session: sessionOf(chatBody(), { native }) }), targetOf(answering('hi')), TIMEOUTS);
    await translating.send();
    expect(translating.drops).toEqual([drop]);
    const passing = new Attempt(
      exchangeFor({ ingress: 'messages', session: sessionOf(chatBody(), { native }) }),
      targetOf(answering('hi'), { capabilities: { nativeProtocols: ['anthropic-messages'] } }),
      TIMEOUTS,
    );
    await passing.send();
    expect(passing.drops).toBeUndefined();
  });

  it("collects what the provider's translation drops through the call", async () => {
    const provider = fakeProvider(async (call) => {
      call.drop?.({ field: 'reasoning_effort', reason: 'the model has no reasoning' });
      return { kind: 'json', body: completionOf('hi'), headers: {} };
    });
    const attempt = new Attempt(exchangeFor({ session: sessionOf(chatBody()) }), targetOf(provider), TIMEOUTS);
    await attempt.send();
    expect(attempt.drops).toEqual([{ field: 'reasoning_effort', reason: 'the model has no reasoning' }]);
  });
});

describe('Attempt: strict requests', () => {
  const drop = { field: 'context_management', what: 'context_management', reason: 'only an Anthropic model serves it' };
  const strict = { 'x-switchyard-strict': 'true' };

  it("refuses the session's drops before calling any provider", async () => {
    const provider = answering('hi');
    const x = exchangeFor({ headers: strict, session: sessionOf(chatBody(), { drops: [drop] }) });
    await expect(new Attempt(x, targetOf(provider), TIMEOUTS).send()).rejects.toMatchObject({ code: 'unsupported_parameter', param: 'context_management' });
    expect(provider.calls).toHaveLength(0);
  });

  it('refuses untranslatable parts for a translating target, and serves them natively', async () => {
    const native = { ...MESSAGES, untranslatable: [drop] };
    const translating = new Attempt(exchangeFor({ headers: strict, ingress: 'messages', session: sessionOf(chatBody(), { native }) }), targetOf(answering('hi')), TIMEOUTS);
    await expect(translating.send()).rejects.toMatchObject({ code: 'unsupported_parameter', param: 'context_management' });
    const provider = answering('hi');
    const passing = new Attempt(
      exchangeFor({ headers: strict, ingress: 'messages', session: sessionOf(chatBody(), { native }) }),
      targetOf(provider, { capabilities: { nativeProtocols: ['anthropic-messages'] } }),
      TIMEOUTS,
    );
    await passing.send();
    expect(provider.calls).toHaveLength(1);
  });

  it("refuses what the provider's translation would drop, from the key's or the alias's strict too", async () => {
    const dropping = () =>
      fakeProvider(async (call) => {
        call.drop?.({ field: 'reasoning_effort', reason: 'the model has no reasoning' });
        return { kind: 'json', body: completionOf('hi'), headers: {} };
      });
    for (const set of [
      (x: ReturnType<typeof exchangeFor>) => (x.ctx.key = { name: 'k', strict: true, allows: () => true }),
      (x: ReturnType<typeof exchangeFor>) => (x.ctx.route = routeOf('chat', [], { strict: true })),
    ]) {
      const x = exchangeFor({ session: sessionOf(chatBody()) });
      set(x);
      await expect(new Attempt(x, targetOf(dropping()), TIMEOUTS).send()).rejects.toMatchObject({ code: 'unsupported_parameter', param: 'reasoning_effort' });
    }
  });

  it('without strict, an unknown x-switchyard-strict value changes nothing', async () => {
    const x = exchangeFor({ headers: { 'x-switchyard-strict': 'yes please' }, session: sessionOf(chatBody(), { drops: [drop] }) });
    await new Attempt(x, targetOf(answering('hi')), TIMEOUTS).send();
    expect(x.dropped).toEqual([drop]);
  });
});

describe('Attempt: count_tokens', () => {
  it("answers the session's estimate for a target that cannot count, without a provider call", async () => {
    const provider = answering('hi');
    const x = exchangeFor({ operation: 'count_tokens', ingress: 'messages', session: sessionOf(chatBody(), { native: MESSAGES, estimate: 42 }) });
    const attempt = new Attempt(x, targetOf(provider), TIMEOUTS);
    await attempt.send();
    attempt.translate();
    expect(await attempt.complete()).toEqual({ kind: 'count', body: { input_tokens: 42 } });
    expect(provider.calls).toHaveLength(0);
    expect(attempt.passthrough).toBe(false);
  });

  // BUG (src/pipeline/attempt.ts, #succeeded): an answer from the gateway's own estimate (no
  // provider call) is recorded as the target's success: recordSuccess(~0 ms) pulls its latency
  // average towards 0 (least-latency then prefers it) and closes its breaker.
  it('an estimate is no verdict on the target: its latency average is untouched', async () => {
    const target = targetOf(answering('hi'));
    target.state.recordSuccess(500);
    const x = exchangeFor({ operation: 'count_tokens', ingress: 'messages', session: sessionOf(chatBody(), { native: MESSAGES, estimate: 42 }) });
    const attempt = new Attempt(x, target, TIMEOUTS);
    await attempt.send();
    attempt.translate();
    await attempt.complete();
    expect(target.state.latencyMs).toBe(500);
  });

  // Same bug: a count_tokens request that holds a cooled-down target's probe closes the breaker
  // without the target having been tried, so chat traffic returns to a target that may still be down.
  it('an estimate on a probing target leaves its breaker open', async () => {
    const state = new TargetState({ failures: 1, windowMs: 60_000, durationMs: 1_000 });
    state.recordFailure(0);
    expect(state.admit(1_000)).toBe('probe');
    const x = exchangeFor({ operation: 'count_tokens', ingress: 'messages', session: sessionOf(chatBody(), { native: MESSAGES, estimate: 42 }) });
    const attempt = new Attempt(x, targetOf(answering('hi'), { state }), TIMEOUTS);
    await attempt.send();
    attempt.translate();
    await attempt.complete();
    expect(state.open).toBe(true);
  });

  it('sends the native request, unstreamed, to a target that counts, and answers its count', async () => {
    const provider = fakeProvider(async () => ({ kind: 'json', body: { input_tokens: 17 }, headers: {} }));
    const x = exchangeFor({ operation: 'count_tokens', ingress: 'messages', session: sessionOf(chatBody({ stream: true }), { native: MESSAGES, estimate: 42 }) });
    const attempt = new Attempt(x, targetOf(provider, { capabilities: { nativeProtocols: ['anthropic-messages'] } }), TIMEOUTS);
    await attempt.send();
    attempt.translate();
    expect(await attempt.complete()).toEqual({ kind: 'count', body: { input_tokens: 17 } });
    expect(provider.calls).toHaveLength(1);
    expect(provider.calls[0]).toMatchObject({ native: MESSAGES, stream: false });
  });

  it('a count answer without input_tokens is the provider fault', async () => {
    const provider = fakeProvider(async () => ({ kind: 'json', body: { tokens: 17 }, headers: {} }));
    const x = exchangeFor({ operation: 'count_tokens', ingress: 'messages', session: sessionOf(chatBody(), { native: MESSAGES }) });
    const attempt = new Attempt(x, targetOf(provider, { capabilities: { nativeProtocols: ['anthropic-messages'] } }), TIMEOUTS);
    await attempt.send();
    expect(() => attempt.translate()).toThrow(UpstreamError);
  });

  it('refuses native-only parts even when only the estimate would answer', async () => {
    const refusal = new GatewayError('invalid_request', 'no chat translation');
    const x = exchangeFor({ operation: 'count_tokens', ingress: 'messages', session: sessionOf(chatBody(), { native: { ...MESSAGES, unservable: [refusal] }, estimate: 3 }) });
    const attempt = new Attempt(x, targetOf(answering('hi')), TIMEOUTS);
    await expect(attempt.send()).rejects.toBe(refusal);
  });
});

describe('Attempt: the call it builds', () => {
  it("applies the target's capabilities: an unsupported parameter is a 400 naming it, and the provider is not called", async () => {
    const provider = answering('hi');
    const x = exchangeFor({ session: sessionOf(chatBody({ seed: 7 })) });
    const attempt = new Attempt(x, targetOf(provider, { capabilities: { unsupportedParams: ['seed'] } }), TIMEOUTS);
    await expect(attempt.send()).rejects.toMatchObject({ code: 'unsupported_parameter', status: 400, param: 'seed' });
    expect(provider.calls).toHaveLength(0);
  });

  it('drops it instead when the target says so, and sends the rest with the target model, limits and request id', async () => {
    const provider = answering('hi');
    const x = exchangeFor({ session: sessionOf(chatBody({ seed: 7, temperature: 0.3 })) });
    const attempt = new Attempt(x, targetOf(provider, { model: 'acme-large', dropUnsupportedParams: true, capabilities: { unsupportedParams: ['seed'] } }), TIMEOUTS);
    await attempt.send();
    const call = provider.calls[0];
    expect(call?.request).not.toHaveProperty('seed');
    expect(call).toMatchObject({ provider: 'acme', model: 'acme-large', stream: false, requestId: 'req_test', timeouts: TIMEOUTS, maxResponseBytes: 1 << 20, request: { temperature: 0.3 } });
    expect(call?.signal).toBe(attempt.signal);
    expect(attempt.call).toBe(call);
  });

  it('embeds through the provider that embeds, with usage and cost priced once', async () => {
    const embed = vi.fn(async () => ({
      object: 'list' as const,
      data: [{ object: 'embedding' as const, index: 0, embedding: [0.5, 0.25] }],
      model: 'embed-1',
      usage: { prompt_tokens: 4, total_tokens: 4 },
    }));
    const provider = fakeProvider(async () => ({ kind: 'json', body: {}, headers: {} }), { embed });
    const x = exchangeFor({ operation: 'embeddings', ingress: 'embeddings', session: sessionOf({ model: 'alias', input: 'four token text' }) });
    const attempt = new Attempt(x, targetOf(provider, { capabilities: { embeddings: true }, price: { input: 1_000_000, output: 0 } }), TIMEOUTS);
    await attempt.send();
    attempt.translate();
    const response = await attempt.complete();
    expect(provider.calls).toHaveLength(0);
    expect(embed).toHaveBeenCalledWith(expect.objectContaining({ embedding: { model: 'alias', input: 'four token text' }, model: 'acme-1' }));
    expect(response).toMatchObject({ kind: 'embeddings', body: { model: 'embed-1', usage: { prompt_tokens: 4, cost: 4 } } });
    expect(x.usage).toEqual({ prompt_tokens: 4, completion_tokens: 0, total_tokens: 4 });
    expect(x.costUsd).toBe(4);
  });
});

describe('Attempt: the chunk stream as an iterator', () => {
  /** An upstream of these events that records whether its reader stopped it early (return()). */
  function upstream(events: unknown[]): AsyncIterable<unknown> & { stopped: number } {
    let i = 0;
    const source = {
      stopped: 0,
      [Symbol.asyncIterator]: () => ({
        next: async () => (i < events.length ? { value: events[i++], done: false } : { value: undefined, done: true }),
        return: async () => {
          source.stopped++;
          return { value: undefined, done: true };
        },
      }),
    };
    return source;
  }

  /** A provider whose translator makes `split(event)` of each event and `tail` at the end. */
  function splitting(
    events: AsyncIterable<unknown>,
    split: (event: unknown) => ChatCompletionChunk | ChatCompletionChunk[] | undefined,
    tail?: () => ChatCompletionChunk | ChatCompletionChunk[] | undefined,
  ) {
    return { ...fakeProvider(async () => ({ kind: 'stream', headers: {}, events })), createStreamTranslator: () => ({ push: split, end: tail }) };
  }

  async function streamOf(provider: ReturnType<typeof splitting>): Promise<AsyncIterator<ChatCompletionChunk>> {
    const attempt = new Attempt(exchangeFor({ session: streamingSession() }), targetOf(provider), TIMEOUTS);
    await attempt.send();
    attempt.translate();
    return (await primedStream(attempt))[Symbol.asyncIterator]();
  }

  it('hands out every chunk a translator makes of one event, none for an event it skips, then the tail, in order, normalised', async () => {
    const source = upstream(['a', 'skip', 'b']);
    const provider = splitting(
      source,
      (e) => (e === 'skip' ? undefined : e === 'a' ? [chunkOf('a1'), chunkOf('a2')] : chunkOf('b')),
      () => [chunkOf('t1'), { ...chunkOf('t2'), object: undefined } as unknown as ChatCompletionChunk],
    );
    const it = await streamOf(provider);
    const seen: ChatCompletionChunk[] = [];
    for (let r = await it.next(); !r.done; r = await it.next()) seen.push(r.value);
    expect(seen.map((c) => c.choices[0]?.delta.content)).toEqual(['a1', 'a2', 'b', 't1', 't2']);
    expect(seen[4].object).toBe('chat.completion.chunk');
    expect(source.stopped).toBe(1);
    expect(await it.next()).toEqual({ value: undefined, done: true });
  });

  it('return() stops reading the upstream once and answers done from then on, without the tail', async () => {
    const source = upstream(['a', 'b', 'c']);
    const tail = vi.fn(() => chunkOf('tail'));
    const it = await streamOf(splitting(source, (e) => chunkOf(String(e)), tail));
    expect((await it.next()).value?.choices[0]?.delta.content).toBe('a');
    expect(await it.return?.()).toEqual({ value: undefined, done: true });
    expect(await it.return?.()).toEqual({ value: undefined, done: true });
    expect(await it.next()).toEqual({ value: undefined, done: true });
    expect(source.stopped).toBe(1);
    expect(tail).not.toHaveBeenCalled();
  });

  it('a translation failure ends the stream as a 502 protocol fault: the upstream is stopped, and next() answers done', async () => {
    const source = upstream(['a', 'bad', 'c']);
    const it = await streamOf(
      splitting(source, (e) => {
        if (e === 'bad') throw new Error('cannot read this event');
        return chunkOf(String(e));
      }),
    );
    expect((await it.next()).value?.choices[0]?.delta.content).toBe('a');
    const err = await it.next().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(err).toBeInstanceOf(UpstreamError);
    expect(err).toMatchObject({ kind: 'protocol' });
    expect(source.stopped).toBe(1);
    expect(await it.next()).toEqual({ value: undefined, done: true });
  });
});
