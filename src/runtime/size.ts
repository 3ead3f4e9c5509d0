import { getHeapStatistics } from 'node:v8';

const UNITS: Record<string, number> = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 };

/** `10mb` → 10485760; plain numbers are bytes. */
export function parseSize(size: string | number): number {
  if (typeof size === 'number') return size;
  const m = /^\s*(\d+(?:\.\d+)?)\s*(b|kb|mb|gb)?\s*$/i.exec(size);
  if (!m) throw new Error(`not a size: ${size}`);
  return Math.floor(Number(m[1]) * UNITS[(m[2] ?? 'b').toLowerCase()]);
}

/**
 * `server.inFlightBodyLimit` in bytes. `auto`: 1/16 of the V8 heap limit, since a held body costs
 * several times its size once parsed (the bytes, the decoded string, the objects), and at least
 * one whole `bodyLimit` body.
 */
export function inFlightBodyLimitOf(setting: string | number, bodyLimit: number): number {
  if (typeof setting === 'string' && setting.trim() === 'auto') return Math.max(bodyLimit, Math.floor(getHeapStatistics().heap_size_limit / 16));
  return parseSize(setting);
}
