/** A target's live state: the circuit breaker (window, cooldown, half-open probe) and the latency average. */
import { describe, expect, it } from 'vitest';
import { TargetState } from './target-state.ts';

const policy = { failures: 3, windowMs: 10_000, durationMs: 30_000 };

/** A state that has just opened at `t` (three failures 1 ms apart ending at t). */
function openedAt(t: number): TargetState {
  const s = new TargetState(policy);
  s.recordFailure(t - 2);
  s.recordFailure(t - 1);
  s.recordFailure(t);
  return s;
}

describe('breaker: opening', () => {
  it('a fresh target is closed and admits every request', () => {
    const s = new TargetState(policy);
    expect(s.open).toBe(false);
    expect(s.admit(0)).toBe('yes');
    expect(s.admit(0)).toBe('yes');
    expect(s.coolingFor(0)).toBe(0);
  });

  it('opens on the Nth failure within the window, not before', () => {
    const s = new TargetState(policy);
    s.recordFailure(1_000);
    s.recordFailure(5_000);
    expect(s.open).toBe(false);
    expect(s.admit(5_000)).toBe('yes');
    s.recordFailure(10_999); // 9,999 ms after the first: still inside the 10 s window
    expect(s.open).toBe(true);
    expect(s.admit(11_000)).toBe('no');
    expect(s.coolingFor(10_999)).toBe(30_000);
  });

  it('failures spread wider than the window do not open it', () => {
    const s = new TargetState(policy);
    s.recordFailure(0);
    s.recordFailure(6_000);
    s.recordFailure(10_000); // the one at 0 is exactly windowMs old: out of the window
    expect(s.open).toBe(false);
    expect(s.admit(10_000)).toBe('yes');
    s.recordFailure(15_999); // 6,000 / 10,000 / 15,999 are within 10 s of each other
    expect(s.open).toBe(true);
  });

  it('a success in between forgets the failures so far', () => {
    const s = new TargetState(policy);
    s.recordFailure(0);
    s.recordFailure(1);
    s.recordSuccess();
    s.recordFailure(2);
    s.recordFailure(3);
    expect(s.open).toBe(false);
    s.recordFailure(4);
    expect(s.open).toBe(true);
  });

  it('without a cooldown policy failures never open it', () => {
    const s = new TargetState(undefined);
    for (let t = 0; t < 20; t++) s.recordFailure(t, 5_000);
    expect(s.open).toBe(false);
    expect(s.admit(20)).toBe('yes');
    expect(s.coolingFor(20)).toBe(0);
  });

  it('failures: 1 opens on the first failure', () => {
    const s = new TargetState({ failures: 1, windowMs: 1_000, durationMs: 500 });
    s.recordFailure(100);
    expect(s.open).toBe(true);
    expect(s.coolingFor(100)).toBe(500);
  });
});

describe('breaker: cooldown and the half-open probe', () => {
  it('refuses during the cooldown; coolingFor counts down to 0', () => {
    const s = openedAt(1_000);
    expect(s.admit(1_000)).toBe('no');
    expect(s.admit(30_999)).toBe('no');
    expect(s.coolingFor(1_000)).toBe(30_000);
    expect(s.coolingFor(21_000)).toBe(10_000);
    expect(s.coolingFor(31_000)).toBe(0);
    expect(s.coolingFor(99_000)).toBe(0);
  });

  it('after the cooldown lets exactly one probe through; others are refused while it runs', () => {
    const s = openedAt(0);
    expect(s.admit(30_000)).toBe('probe');
    expect(s.admit(30_001)).toBe('no');
    expect(s.admit(90_000)).toBe('no');
    expect(s.open).toBe(true);
  });

  it('a successful probe closes the breaker: full traffic again', () => {
    const s = openedAt(0);
    expect(s.admit(30_000)).toBe('probe');
    s.recordSuccess(250);
    expect(s.open).toBe(false);
    expect(s.admit(30_001)).toBe('yes');
    expect(s.admit(30_001)).toBe('yes');
    expect(s.coolingFor(30_001)).toBe(0);
  });

  it('a failed probe reopens at once for another full cooldown, without counting to N again', () => {
    const s = openedAt(0);
    expect(s.admit(30_000)).toBe('probe');
    s.recordFailure(31_000);
    expect(s.admit(31_000)).toBe('no');
    expect(s.coolingFor(31_000)).toBe(30_000);
    expect(s.admit(61_000)).toBe('probe');
  });

  it('a failed probe honours a Retry-After longer than the cooldown', () => {
    const s = openedAt(0);
    s.admit(30_000);
    s.recordFailure(30_000, 120_000);
    expect(s.coolingFor(30_000)).toBe(120_000);
    expect(s.admit(149_999)).toBe('no');
    expect(s.admit(150_000)).toBe('probe');
  });

  it('a failed probe with a shorter Retry-After still waits the cooldown', () => {
    const s = openedAt(0);
    s.admit(30_000);
    s.recordFailure(30_000, 1_000);
    expect(s.coolingFor(30_000)).toBe(30_000);
  });

  it('releaseProbe (probe abandoned without a verdict) lets the next request probe', () => {
    const s = openedAt(0);
    expect(s.admit(30_000)).toBe('probe');
    expect(s.admit(30_000)).toBe('no');
    s.releaseProbe();
    expect(s.open).toBe(true);
    expect(s.admit(30_000)).toBe('probe');
  });

  it('releaseProbe on a closed target changes nothing', () => {
    const s = new TargetState(policy);
    s.releaseProbe();
    expect(s.admit(0)).toBe('yes');
    expect(s.open).toBe(false);
  });
});

describe('breaker: Retry-After', () => {
  it('a failure naming its wait opens the breaker at once for that long, whatever the count', () => {
    const s = new TargetState(policy);
    s.recordFailure(1_000, 7_000);
    expect(s.open).toBe(true);
    expect(s.coolingFor(1_000)).toBe(7_000);
    expect(s.admit(7_999)).toBe('no');
    expect(s.admit(8_000)).toBe('probe');
  });

  it('a shorter Retry-After never shortens an open breaker; a longer one extends it', () => {
    const s = openedAt(0); // open until 30,000
    s.recordFailure(1_000, 2_000);
    expect(s.coolingFor(1_000)).toBe(29_000);
    s.recordFailure(1_000, 60_000);
    expect(s.coolingFor(1_000)).toBe(60_000);
  });

  it('a Retry-After of 0 counts as a plain failure', () => {
    const s = new TargetState(policy);
    s.recordFailure(0, 0);
    expect(s.open).toBe(false);
    s.recordFailure(1, 0);
    s.recordFailure(2, 0);
    expect(s.open).toBe(true);
    expect(s.coolingFor(2)).toBe(30_000);
  });

  it('Retry-After does not add to the failure count: the window still needs N plain failures', () => {
    const s = new TargetState(policy);
    s.recordFailure(0, 1_000); // opens until 1,000
    expect(s.admit(1_000)).toBe('probe');
    s.recordSuccess();
    s.recordFailure(2_000);
    s.recordFailure(2_001);
    expect(s.open).toBe(false);
  });
});

describe('latency average and in-flight count', () => {
  it('is undefined until measured, then the first sample, then an exponential moving average (α = 0.3)', () => {
    const s = new TargetState(undefined);
    expect(s.latencyMs).toBeUndefined();
    s.recordSuccess(100);
    expect(s.latencyMs).toBe(100);
    s.recordSuccess(200);
    expect(s.latencyMs).toBeCloseTo(130, 10);
    s.recordSuccess(30);
    expect(s.latencyMs).toBeCloseTo(100, 10);
  });

  it('a success without a latency leaves the average alone', () => {
    const s = new TargetState(undefined);
    s.recordSuccess(100);
    s.recordSuccess();
    expect(s.latencyMs).toBe(100);
  });

  it('failures do not touch the average', () => {
    const s = new TargetState(policy);
    s.recordSuccess(80);
    s.recordFailure(0);
    expect(s.latencyMs).toBe(80);
  });

  it('inFlight starts at 0 and is a plain counter the caller moves', () => {
    const s = new TargetState(undefined);
    expect(s.inFlight).toBe(0);
    s.inFlight++;
    s.inFlight++;
    s.inFlight--;
    expect(s.inFlight).toBe(1);
  });
});
