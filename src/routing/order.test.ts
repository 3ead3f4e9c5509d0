/** The order an alias's targets are tried in, per strategy, with an injected `random`. */
import { describe, expect, it, vi } from 'vitest';
import { orderTargets } from './order.ts';
import { mulberry32 } from '../protocol/random.ts';

/** Only the fields orderTargets reads: the model (as a name), weight and live state. */
function target(model: string, opts: { weight?: number; latencyMs?: number; inFlight?: number } = {}) {
  return { model, weight: opts.weight ?? 1, state: { latencyMs: opts.latencyMs, inFlight: opts.inFlight ?? 0 } };
}

const models = (targets: ReadonlyArray<{ model: string }>) => targets.map((t) => t.model);

/** A `random` that returns the given values in turn (and fails the test if asked for more). */
function sequence(...values: number[]): () => number {
  return () => {
    const v = values.shift();
    if (v === undefined) throw new Error('random() called more often than expected');
    return v;
  };
}

describe('fallback', () => {
  it('keeps the written order, as a new array, without drawing random numbers', () => {
    const targets = [target('a'), target('b'), target('c')];
    const random = vi.fn(() => 0.5);
    const ordered = orderTargets('fallback', targets, random);
    expect(models(ordered)).toEqual(['a', 'b', 'c']);
    expect(ordered).not.toBe(targets);
    expect(random).not.toHaveBeenCalled();
  });

  it('ignores weights and live state', () => {
    const targets = [target('a', { weight: 1, latencyMs: 900, inFlight: 9 }), target('b', { weight: 100, latencyMs: 1, inFlight: 0 })];
    expect(models(orderTargets('fallback', targets, () => 0))).toEqual(['a', 'b']);
  });
});

describe('weighted', () => {
  const targets = [target('a', { weight: 1 }), target('b', { weight: 3 })];

  it("picks by cumulative weight: random()·total falls in a target's share", () => {
    // total 4: [0, 1) → a, [1, 4) → b
    expect(models(orderTargets('weighted', targets, sequence(0, 0)))).toEqual(['a', 'b']);
    expect(models(orderTargets('weighted', targets, sequence(0.24, 0)))).toEqual(['a', 'b']);
    expect(models(orderTargets('weighted', targets, sequence(0.25, 0)))).toEqual(['b', 'a']);
    expect(models(orderTargets('weighted', targets, sequence(0.999999, 0)))).toEqual(['b', 'a']);
  });

  it('samples without replacement: every target appears exactly once, the rest re-drawn from what is left', () => {
    const three = [target('a', { weight: 2 }), target('b', { weight: 1 }), target('c', { weight: 1 })];
    // First draw: 0.6·4 = 2.4 → b (a covers [0, 2)). Then [a, c], total 3: 0.7·3 = 2.1 → c. Then a.
    expect(models(orderTargets('weighted', three, sequence(0.6, 0.7, 0.1)))).toEqual(['b', 'c', 'a']);
    // First draw: 0.9 → c. Then [a, b], total 3: 0.1·3 = 0.3 → a. Then b.
    expect(models(orderTargets('weighted', three, sequence(0.9, 0.1, 0.5)))).toEqual(['c', 'a', 'b']);
  });

  it('draws one random number per target', () => {
    const random = vi.fn(() => 0.5);
    orderTargets('weighted', [target('a'), target('b'), target('c'), target('d')], random);
    expect(random).toHaveBeenCalledTimes(4);
  });

  it('does not change the input array', () => {
    const input = [target('a'), target('b'), target('c')];
    orderTargets('weighted', input, sequence(0.9, 0.9, 0.9));
    expect(models(input)).toEqual(['a', 'b', 'c']);
  });

  it('over many seeded draws, the first choice follows the weights (1:3)', () => {
    const random = mulberry32(7);
    let first = 0;
    const draws = 4000;
    for (let i = 0; i < draws; i++) if (orderTargets('weighted', targets, random)[0].model === 'b') first++;
    // Expected 3000; binomial sd ≈ 27, so ±150 is > 5 sd.
    expect(first).toBeGreaterThan(2850);
    expect(first).toBeLessThan(3150);
  });

  it('a zero-weight target is never picked while a weighted one is left, but is not dropped', () => {
    const withZero = [target('zero', { weight: 0 }), target('a', { weight: 1 }), target('b', { weight: 1 })];
    for (const r of [0, 0.25, 0.5, 0.75, 0.999999]) {
      const ordered = models(orderTargets('weighted', withZero, () => r));
      expect(ordered).toHaveLength(3);
      expect(ordered[2]).toBe('zero');
    }
  });

  it('a single target comes back alone', () => {
    expect(models(orderTargets('weighted', [target('only', { weight: 5 })], () => 0.3))).toEqual(['only']);
  });

  it('an empty alias gives an empty order', () => {
    expect(orderTargets('weighted', [], () => 0.3)).toEqual([]);
  });
});

describe('least-latency', () => {
  it('orders by moving average, lowest first, with unmeasured targets ahead of all measured ones', () => {
    const targets = [target('slow', { latencyMs: 900 }), target('fast', { latencyMs: 120 }), target('new', {}), target('mid', { latencyMs: 400 })];
    expect(models(orderTargets('least-latency', targets, () => 0))).toEqual(['new', 'fast', 'mid', 'slow']);
  });

  it('a measured 0 ms still comes after an unmeasured target', () => {
    const targets = [target('zero', { latencyMs: 0 }), target('new', {})];
    expect(models(orderTargets('least-latency', targets, () => 0))).toEqual(['new', 'zero']);
  });

  it('ties (equal averages, several unmeasured) keep the written order', () => {
    const targets = [target('m1', { latencyMs: 200 }), target('u1', {}), target('m2', { latencyMs: 200 }), target('u2', {}), target('m0', { latencyMs: 100 })];
    expect(models(orderTargets('least-latency', targets, () => 0))).toEqual(['u1', 'u2', 'm0', 'm1', 'm2']);
  });
});

describe('least-busy', () => {
  it('orders by requests in flight, fewest first; ties keep the written order', () => {
    const targets = [target('a', { inFlight: 3 }), target('b', { inFlight: 0 }), target('c', { inFlight: 1 }), target('d', { inFlight: 0 }), target('e', { inFlight: 3 })];
    expect(models(orderTargets('least-busy', targets, () => 0))).toEqual(['b', 'd', 'c', 'a', 'e']);
  });

  it('ignores latency', () => {
    const targets = [target('a', { inFlight: 1, latencyMs: 10 }), target('b', { inFlight: 0, latencyMs: 5000 })];
    expect(models(orderTargets('least-busy', targets, () => 0))).toEqual(['b', 'a']);
  });

  it('reads the state at call time (a shared, live object)', () => {
    const a = target('a');
    const b = target('b');
    expect(models(orderTargets('least-busy', [a, b], () => 0))).toEqual(['a', 'b']);
    a.state.inFlight = 2;
    expect(models(orderTargets('least-busy', [a, b], () => 0))).toEqual(['b', 'a']);
  });
});
