import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { createEngine } from './engine.ts';
import { isStateCall } from './ipc-protocol.ts';
import { answerStateCall } from './ipc-server.ts';
import { IpcStore, type IpcChannel } from './ipc-store.ts';
import { MemoryStore } from './memory-store.ts';
import type { ScopeStore } from './store.ts';
import { backendSuite, recordingLogger, T0 } from './testing/backend-suite.ts';
import { StateUnavailableError, type Scope } from './types.ts';

/**
 * A worker's channel to a primary serving `store`: messages go through JSON (as over the real
 * IPC channel) and arrive on a later turn. `paused` holds the primary's replies (what was asked
 * is done); `deaf` loses the calls (nothing is done); `close` is the primary dying.
 */
function channelTo(store: ScopeStore) {
  let open = true;
  let onMessage: (m: unknown) => void = () => undefined;
  let onClose: () => void = () => undefined;
  const control = { paused: false, deaf: false, held: [] as unknown[], sent: 0 };
  const deliver = (reply: unknown) => setImmediate(() => onMessage(JSON.parse(JSON.stringify(reply))));
  const channel: IpcChannel = {
    isOpen: () => open,
    send(message) {
      control.sent++;
      if (control.deaf) return;
      const call = JSON.parse(JSON.stringify(message));
      if (!isStateCall(call)) throw new Error('not a state call');
      setImmediate(async () => {
        const reply = await answerStateCall(store, call);
        if (!open) return;
        if (control.paused) control.held.push(reply);
        else deliver(reply);
      });
    },
    onMessage: (listener) => void (onMessage = listener),
    onClose: (listener) => void (onClose = listener),
  };
  return {
    channel,
    control,
    resume() {
      control.paused = false;
      for (const reply of control.held.splice(0)) deliver(reply);
    },
    close() {
      open = false;
      onClose();
    },
  };
}

backendSuite('memory through the cluster primary (IPC)', async () => {
  const store = new MemoryStore();
  const worker = () => createEngine(new IpcStore({ channel: channelTo(store).channel, log: recordingLogger() }), { log: recordingLogger(), renewEveryMs: 3_600_000 });
  const a = worker();
  const b = worker();
  return {
    a,
    b,
    close: async () => {
      await Promise.all([a.close(), b.close()]);
      await store.close();
    },
  };
});

const scopes: Scope[] = [{ name: 'key:k', limits: { rpm: 10, budget: { usd: 10, period: 'daily' } } }];
const usage = { input: 10, cachedInput: 0, cacheWrite: 0, output: 5 };

describe('IPC store (a cluster worker)', () => {
  it('with no primary: unavailable at once, nothing sent, nothing to give back later', async () => {
    const store = new MemoryStore();
    const link = channelTo(store);
    link.close();
    const log = recordingLogger();
    const ipc = new IpcStore({ channel: link.channel, log });
    await expect(ipc.admit({ id: 'r1', tokens: 1, costNano: 0, leaseTtlMs: 30_000, scopes: [{ name: 'key:k', rpm: 1, period: 'total' }] })).rejects.toMatchObject({
      name: 'StateUnavailableError',
      maybeApplied: false,
    });
    expect(link.control.sent).toBe(0);
    const engine = createEngine(ipc, { log: recordingLogger() });
    expect(await engine.admit({ scopes, tokens: 10, costUsd: 1, now: T0 })).toMatchObject({ status: 'unavailable', reason: 'the cluster primary is gone' });
    expect(log.lines).toEqual([{ level: 'error', msg: 'cluster primary is unreachable' }]);
    await engine.close();
    await store.close();
  });

  it('a reply that does not come in time may have been applied: the engine gives back the reservation once the primary answers', async () => {
    const store = new MemoryStore();
    const link = channelTo(store);
    const log = recordingLogger();
    const engine = createEngine(new IpcStore({ channel: link.channel, log, timeoutMs: 30 }), { log, retryEveryMs: 10 });
    const one: Scope[] = [{ name: 'key:one', limits: { concurrency: 1 } }];
    link.control.paused = true;
    expect(await engine.admit({ scopes: one, tokens: 1, costUsd: 0, now: T0 })).toMatchObject({ status: 'unavailable', reason: 'the cluster primary did not answer admit within 30 ms' });
    // The primary did reserve the slot; the worker never learnt it.
    expect((await store.figures([{ name: 'key:one', period: 'total' }], T0)).figures[0]!.inFlight).toBe(1);
    link.resume();
    await sleep(60);
    expect((await store.figures([{ name: 'key:one', period: 'total' }], T0)).figures[0]!.inFlight).toBe(0);
    expect(log.lines.map((l) => l.msg)).toEqual(['cluster primary is unreachable', 'cluster primary is reachable again']);
    await engine.close();
    await store.close();
  });

  it('settlements made while the primary is slow are queued and booked when it answers', async () => {
    const store = new MemoryStore();
    const link = channelTo(store);
    const log = recordingLogger();
    // The timeout is long enough for the first admit to answer on a loaded CI machine; the settle
    // made while the link is paused still waits it out and is queued.
    const engine = createEngine(new IpcStore({ channel: link.channel, log, timeoutMs: 300 }), { log, retryEveryMs: 10 });
    const r = await engine.admit({ scopes, tokens: 10, costUsd: 1, now: T0 });
    if (r.status !== 'admitted') throw new Error(r.status);
    link.control.paused = true;
    expect(await engine.settle(r.lease, { usage, costUsd: 0.5, labels: { key: 'k', model: 'm' }, now: T0 })).toBe('queued');
    link.resume();
    let budget: unknown;
    for (let i = 0; i < 100; i++) {
      await sleep(20);
      budget = (await engine.status(scopes, T0))[0]?.budget;
      if ((budget as { spentUsd?: number } | undefined)?.spentUsd === 0.5) break;
    }
    expect(budget).toMatchObject({ spentUsd: 0.5, reservedUsd: 0 });
    await engine.close();
    await store.close();
  });

  it('calls waiting when the primary dies fail at once, not after the timeout', async () => {
    const store = new MemoryStore();
    const link = channelTo(store);
    const ipc = new IpcStore({ channel: link.channel, log: recordingLogger(), timeoutMs: 60_000 });
    link.control.paused = true;
    const waiting = ipc.figures([{ name: 'key:k', period: 'total' }]);
    await sleep(5);
    const started = Date.now();
    link.close();
    await expect(waiting).rejects.toBeInstanceOf(StateUnavailableError);
    expect(Date.now() - started).toBeLessThan(1_000);
    await store.close();
  });

  it('usage of requests without limits goes to the primary together, not one message each, and waits while it does not answer', async () => {
    const store = new MemoryStore();
    const link = channelTo(store);
    const engine = createEngine(new IpcStore({ channel: link.channel, log: recordingLogger(), timeoutMs: 30 }), { log: recordingLogger() });
    const settleOne = async () => {
      const r = await engine.admit({ scopes: [], tokens: 10, costUsd: 0.001, now: T0 });
      if (r.status !== 'admitted') throw new Error(r.status);
      await engine.settle(r.lease, { usage, costUsd: 0.001, labels: { key: 'open', model: 'm' }, now: T0 });
    };
    const requests = async (n: number) => {
      const page = await engine.usage({ startTime: T0 / 1000, endTime: T0 / 1000 + 60 });
      return page.data[0]?.results[0]?.num_model_requests === n;
    };
    link.control.deaf = true;
    for (let i = 0; i < 20; i++) await settleOne();
    await sleep(150); // the first 20 went together, and were lost
    link.control.deaf = false;
    for (let i = 0; i < 30; i++) await settleOne();
    await sleep(150); // kept, and sent again with the next 30
    expect(link.control.sent).toBe(2);
    expect(await requests(50)).toBe(true);
    // A report includes what this worker has not sent yet.
    await settleOne();
    expect(await requests(51)).toBe(true);
    await engine.close();
    await store.close();
  });

  it('a store error that is not an outage reaches the engine as one (logged, not queued)', async () => {
    const inner = new MemoryStore();
    const broken: ScopeStore = {
      admit: (r) => inner.admit(r),
      settle: async () => {
        throw new Error('no such lease format');
      },
      renew: (r) => inner.renew(r),
      figures: (s, now) => inner.figures(s, now),
      usageRows: (from, to) => inner.usageRows(from, to),
      close: () => inner.close(),
    };
    const log = recordingLogger();
    const engine = createEngine(new IpcStore({ channel: channelTo(broken).channel, log }), { log });
    const r = await engine.admit({ scopes, tokens: 10, costUsd: 1, now: T0 });
    if (r.status !== 'admitted') throw new Error(r.status);
    expect(await engine.settle(r.lease, { usage, costUsd: 0.5, now: T0 })).toBe('failed');
    expect(log.lines.some((l) => l.level === 'error' && l.msg === 'state backend rejected a settlement')).toBe(true);
    await engine.close();
    await inner.close();
  });
});
