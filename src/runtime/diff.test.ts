import { describe, expect, it } from 'vitest';
import type { GatewayConfig, KeyConfig } from '../config/types.ts';
import { describeChanges, describeChangesInSteps } from './diff.ts';

const key = (i: number, team = 'a'): KeyConfig => ({ name: `key-${i}`, key: `sk-test-${i}-0123456789`, team, models: ['*'] }) as KeyConfig;
const config = (keys: KeyConfig[]): GatewayConfig => ({ server: {}, log: {}, state: {}, metrics: {}, models: {}, providers: {}, keys }) as unknown as GatewayConfig;

describe('describeChangesInSteps', () => {
  it('finds what describeChanges finds among 5,000 keys, a slice at a time', async () => {
    const before = Array.from({ length: 5_000 }, (_, i) => key(i));
    // key-0 removed, key-2500 changed (another object with another team), key-7000 added.
    const after = [...before.slice(1, 2_500), key(2_500, 'b'), ...before.slice(2_501), key(7_000)];
    const steps = await describeChangesInSteps(config(before), config(after));
    expect(steps.keys).toEqual({ added: ['key-7000'], removed: ['key-0'], changed: ['key-2500'] });
    expect(steps).toEqual(describeChanges(config(before), config(after)));
  });

  it('an equal copy of every key is no change', async () => {
    const before = Array.from({ length: 3_000 }, (_, i) => key(i));
    const steps = await describeChangesInSteps(config(before), config(before.map((k) => ({ ...k }))));
    expect(steps.keys).toEqual({ added: [], removed: [], changed: [] });
  });
});
