import { describe, expect, it } from 'vitest';
import { mergeIdentities, mergeProviderViews, type ProviderView } from './providers-view.ts';

const view = (name: string, identity: ProviderView['identity'], state: ProviderView['state'] = 'ready'): ProviderView => ({
  name,
  plugin: 'bedrock',
  state,
  unavailable: state === 'ready' ? null : 'no credentials',
  identity,
});
const soon = { source: 'aws:web-identity', expiresAt: '2026-11-26T23:20:00.000Z', expiresInS: 300, obtainedAt: '2026-11-26T22:20:00.000Z', refreshes: 2, failures: 0 };
const later = { source: 'aws:web-identity', expiresAt: '2026-11-26T23:50:00.000Z', expiresInS: 2100, obtainedAt: '2026-11-26T22:50:00.000Z', refreshes: 3, failures: 1, lastError: 'AccessDenied' };

describe('mergeProviderViews', () => {
  it("one provider across two workers: the soonest expiry, the latest fetch, counts summed, the failure named by its worker, each worker's line kept", () => {
    const [merged] = mergeProviderViews([
      { id: 1, providers: [view('aws', soon)] },
      { id: 2, providers: [view('aws', later)] },
    ]);
    expect(merged).toEqual({
      name: 'aws',
      plugin: 'bedrock',
      state: 'ready',
      unavailable: null,
      identity: { source: 'aws:web-identity', expiresAt: soon.expiresAt, expiresInS: 300, obtainedAt: later.obtainedAt, lastError: 'worker 2: AccessDenied', refreshes: 5, failures: 1 },
      workers: [
        { id: 1, state: 'ready', identity: soon },
        { id: 2, state: 'ready', identity: later },
      ],
    });
  });

  it('a provider unavailable on one worker is unavailable; sources that differ are all named', () => {
    const [merged] = mergeProviderViews([
      { id: 1, providers: [view('aws', { ...soon, source: 'aws:imds' })] },
      { id: 2, providers: [view('aws', null, 'unavailable')] },
      { id: 3, providers: [view('aws', soon)] },
    ]);
    expect(merged.state).toBe('unavailable');
    expect(merged.unavailable).toBe('no credentials');
    expect(merged.identity?.source).toBe('aws:imds, aws:web-identity');
    expect(merged.workers.map((w) => w.state)).toEqual(['ready', 'unavailable', 'ready']);
  });

  it('a lone process: its own view, unchanged', () => {
    expect(mergeProviderViews([{ id: null, providers: [view('aws', later)] }])).toEqual([{ ...view('aws', later), workers: [{ id: null, state: 'ready', identity: later }] }]);
    expect(mergeIdentities([{ id: null, identity: null }])).toBeNull();
  });
});
