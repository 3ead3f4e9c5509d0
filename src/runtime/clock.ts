import { setTimeout as sleep } from 'node:timers/promises';

import type { Clock } from '../plugin-api.ts';

export type { Clock };

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) => (ms <= 0 ? Promise.resolve() : sleep(ms, undefined, { signal })),
  random: Math.random,
};
