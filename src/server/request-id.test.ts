import type { IncomingMessage } from 'node:http';
import { expect, it } from 'vitest';
import { freshRequestId, requestIdFor } from './request-id.ts';

const withHeader = (id?: string) => ({ headers: id === undefined ? {} : { 'x-request-id': id } }) as IncomingMessage;

it('fresh ids are req_ and 32 hex digits, all different across several refills of the random pool', () => {
  const ids = Array.from({ length: 256 * 3 + 7 }, freshRequestId);
  for (const id of ids) expect(id).toMatch(/^req_[0-9a-f]{32}$/);
  expect(new Set(ids).size).toBe(ids.length);
});

it('fresh ids begin with their time, so later ids sort later', () => {
  const at = Date.UTC(2026, 10, 27, 8, 0, 0);
  const first = freshRequestId(at);
  expect(first.slice(4, 16)).toBe(at.toString(16).padStart(12, '0'));
  const later = Array.from({ length: 50 }, (_, i) => freshRequestId(at + 1 + i));
  expect([first, ...later].sort()).toEqual([first, ...later]);
});

it("keeps a client's sane x-request-id and replaces an odd one or one holding a secret", () => {
  expect(requestIdFor(withHeader('trace-123.a:b@c'))).toBe('trace-123.a:b@c');
  expect(requestIdFor(withHeader('has space'))).toMatch(/^req_[0-9a-f]{32}$/);
  expect(requestIdFor(withHeader())).toMatch(/^req_[0-9a-f]{32}$/);
  expect(requestIdFor(withHeader('sk-secret-1'), (t) => t.replace('sk-secret-1', '[REDACTED]'))).toMatch(/^req_/);
});
