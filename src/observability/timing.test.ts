import { expect, it } from 'vitest';
import { addTimingHeaders, overheadMs, roundMs } from './timing.ts';

const ctx = (startedAt: number, upstreamMs: number, firstChunkMs?: number) => ({ startedAt, timing: { upstreamMs, firstChunkMs } });

it('the overhead is the time since arrival minus the upstream waits, never negative', () => {
  expect(overheadMs(ctx(100, 30), 150)).toBe(20);
  expect(overheadMs(ctx(100, 80), 150)).toBe(0);
  expect(roundMs(1.23456)).toBe(1.23);
});

it('Server-Timing has gateway and upstream, and ttft once a stream has its first chunk', () => {
  const json: Record<string, string> = {};
  addTimingHeaders(json, ctx(0, 12.344), 13.5);
  expect(json).toEqual({ 'x-switchyard-overhead-ms': '1.16', 'server-timing': 'gateway;dur=1.16, upstream;dur=12.34' });
  const stream: Record<string, string> = {};
  addTimingHeaders(stream, ctx(0, 40, 42.5), 42.5);
  expect(stream['server-timing']).toBe('gateway;dur=2.5, upstream;dur=40, ttft;dur=42.5');
});
