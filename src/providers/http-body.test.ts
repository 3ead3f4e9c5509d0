/** readCapped: a whole answer body off a Node stream's events, within a byte budget. */
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { readCapped } from './http-body.ts';

const tooLarge = () => new Error('too large');

/** A body that yields `chunks`, then ends (or fails with `error`, or closes early with `close`). */
function bodyOf(chunks: string[], end: { error?: Error; close?: boolean } = {}): Readable {
  const body = new Readable({ read() {} });
  setImmediate(() => {
    for (const c of chunks) body.push(Buffer.from(c));
    if (end.error) body.destroy(end.error);
    else if (end.close) body.destroy();
    else body.push(null);
  });
  return body;
}

describe('readCapped', () => {
  it('joins the chunks and takes their bytes from the budget', async () => {
    const budget = { left: 100 };
    const bytes = await readCapped(bodyOf(['{"a":', '1}']), budget, tooLarge);
    expect(bytes.toString()).toBe('{"a":1}');
    expect(budget.left).toBe(93);
  });

  it('past the budget: fails with tooLarge() and destroys the body', async () => {
    const body = bodyOf(['12345', '67890', 'never read']);
    await expect(readCapped(body, { left: 7 }, tooLarge)).rejects.toThrow('too large');
    expect(body.destroyed).toBe(true);
  });

  it('a body that fails fails the read with its error', async () => {
    await expect(readCapped(bodyOf(['{'], { error: new Error('reset') }), { left: 100 }, tooLarge)).rejects.toThrow('reset');
  });

  it('a body closed before its end fails the read (premature close)', async () => {
    await expect(readCapped(bodyOf(['{'], { close: true }), { left: 100 }, tooLarge)).rejects.toMatchObject({ code: 'ERR_STREAM_PREMATURE_CLOSE' });
  });

  it('a body already destroyed fails at once', async () => {
    const body = new Readable({ read() {} });
    body.destroy();
    await expect(readCapped(body, { left: 100 }, tooLarge)).rejects.toMatchObject({ code: 'ERR_STREAM_PREMATURE_CLOSE' });
  });
});
