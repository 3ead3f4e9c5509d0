import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { BodyBudget, bodyBytesOf } from './body-intake.ts';

const req = (headers: Record<string, string>) => ({ headers }) as unknown as IncomingMessage;

describe('BodyBudget', () => {
  it('takes what fits, refuses what does not, and takes again once bytes are given back', () => {
    const budget = new BodyBudget(100);
    expect(budget.take(60)).toBe(true);
    expect(budget.take(50)).toBe(false);
    expect(budget.held).toBe(60);
    expect(budget.take(40)).toBe(true);
    budget.give(60);
    expect(budget.held).toBe(40);
    expect(budget.take(50)).toBe(true);
  });
});

describe('bodyBytesOf', () => {
  it('counts Content-Length, the whole bodyLimit when chunked, nothing without a body, and leaves bodies over the limit to the 413', () => {
    expect(bodyBytesOf(req({ 'content-length': '1234' }), 10_000)).toBe(1234);
    expect(bodyBytesOf(req({ 'transfer-encoding': 'chunked' }), 10_000)).toBe(10_000);
    expect(bodyBytesOf(req({}), 10_000)).toBe(0);
    expect(bodyBytesOf(req({ 'content-length': '10001' }), 10_000)).toBeUndefined();
  });
});
