import { describe, expect, it } from 'vitest';
import type { Runtime } from '../runtime/build.ts';
import { BUCKET_MS, type ActivitySnapshot, type RequestSummary } from './activity.ts';
import { ClusterConsole } from './cluster-view.ts';
import type { ConsoleSnapshot } from './snapshot.ts';
import type { TargetView } from './views.ts';

const NOW = 1_700_000_000_000;
const AT = NOW - (NOW % BUCKET_MS);

function request(id: string, at: number): RequestSummary {
  return { id, at, key: 'dev', team: null, alias: 'chat', target: 'a/m', status: 200, durationMs: 5, ttftMs: null, tokens: null, costUsd: 0.01, error: null, attempts: [] };
}

function activity(requests: number, latency: number[], recent: RequestSummary[], inFlight: number): ActivitySnapshot {
  return {
    startedAt: NOW - 120_000,
    inFlight,
    buckets: [{ at: AT, requests, errors: 1, latency, ttft: [], tokens: 10 * requests, costUsd: 0.01 * requests, targetErrors: [['chat|a|m', 1]] }],
    lastError: [['chat|a|m', { at: NOW - requests, status: 500, message: `failed on a worker with ${requests}` }]],
    lastRequest: [['dev', NOW - requests]],
    recent,
  };
}

const target = (state: TargetView['state'], coolingUntil: number | null): TargetView => ({
  provider: 'a',
  model: 'm',
  state,
  cooling_until: coolingUntil,
  unavailable: null,
  in_flight: 1,
  latency_ms: state === 'healthy' ? 100 : 300,
  errors: 1,
  lastError: null,
});

function worker(id: number, requests: number, latency: number[], state: TargetView['state'], coolingUntil: number | null, reload: ConsoleSnapshot['last_reload']): ConsoleSnapshot {
  return {
    worker: { id, pid: 1000 + id },
    uptime_s: 60 * id,
    generation: 2,
    activity: activity(requests, latency, [request(`w${id}-a`, NOW - 3000 + id), request(`w${id}-b`, NOW - 1000 + id)], id),
    targets: [{ alias: 'chat', strategy: 'priority', targets: [target(state, coolingUntil)] }],
    last_reload: reload,
    providers: [],
  };
}

// Cast on purpose: only the fields the view reads.
const runtime = { models: new Map([['chat', { name: 'chat', strategy: 'priority', targets: [{ provider: 'a', model: 'm' }] }]]) } as unknown as Runtime;

describe('ClusterConsole', () => {
  const rejected = { ok: false, generation: 2, at: new Date(NOW - 5000).toISOString(), trigger: 'SIGHUP', errors: ['gateway.yaml:3:1 bad'] };
  const view = new ClusterConsole(
    {
      snapshots: [worker(2, 7, [400, 500], 'cooling', NOW + 90_000, { ...rejected, at: new Date(NOW - 4990).toISOString() }), worker(1, 5, [100, 200], 'healthy', null, rejected)],
      missing: [{ worker: 3, reason: 'starting' }],
    },
    NOW,
  );

  it('adds up every worker’s traffic, pools their latency samples and interleaves their requests by time', () => {
    const totals = view.activity.totals(NOW);
    expect(totals).toMatchObject({ requests: 12, errors: 2, tokens: 120 });
    expect(totals.costUsd).toBeCloseTo(0.12);
    expect(totals.p99Ms).toBe(500);
    expect(totals.p50Ms).toBe(200);
    expect(view.activity.inFlight).toBe(3);
    expect(view.activity.recent().map((r) => [r.id, r.worker])).toEqual([
      ['w2-b', 2],
      ['w1-b', 1],
      ['w2-a', 2],
      ['w1-a', 1],
    ]);
    expect(view.activity.lastRequestOf('dev')).toBe(NOW - 5);
  });

  it('says which workers the figures cover and which are missing', () => {
    const scope = view.scope();
    expect(scope.workers.map((w) => [w.id, w.pid, w.requests_15m, w.in_flight])).toEqual([
      [1, 1001, 5, 1],
      [2, 1002, 7, 2],
    ]);
    expect(scope.missing).toEqual([{ worker: 3, reason: 'starting' }]);
    expect(view.uptime()).toBe(120);
  });

  it('shows a target cooling on one worker as cooling, on which worker and for how long', () => {
    const [chat] = view.targets(runtime);
    expect(chat.targets[0]).toMatchObject({ state: 'cooling', cooling_until: NOW + 90_000, in_flight: 2, latency_ms: 200, errors: 2 });
    expect(chat.targets[0].lastError?.message).toBe('failed on a worker with 5');
    expect(chat.targets[0].workers).toEqual([
      { id: 1, state: 'healthy', cooling_until: null },
      { id: 2, state: 'cooling', cooling_until: NOW + 90_000 },
    ]);
    expect(view.cooling(runtime)).toEqual([{ alias: 'chat', provider: 'a', model: 'm', until: NOW + 90_000, left_ms: 90_000, workers: [2], of: 2 }]);
  });

  it('reports the newest reload with its message and the workers where it ended the same way', () => {
    expect(view.lastReload()).toMatchObject({ ok: false, trigger: 'SIGHUP', message: 'gateway.yaml:3:1 bad', workers: [1, 2], of: 2 });
    const lone = new ClusterConsole({ snapshots: [{ ...worker(1, 1, [], 'healthy', null, null), worker: null }], missing: [] }, NOW);
    expect(lone.lastReload()).toBeNull();
    expect(lone.cooling(runtime)).toEqual([]);
    expect(lone.scope().workers[0].id).toBeNull();
  });
});
