import { setTimeout as sleep } from 'node:timers/promises';

/** Time and randomness, injectable so that retry and routing tests are deterministic. */
export interface Clock {
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  random(): number;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) => (ms <= 0 ? Promise.resolve() : sleep(ms, undefined, { signal })),
  random: Math.random,
};
