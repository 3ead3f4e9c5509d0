/** `validate`: the body against the chat (or embeddings) request schema; a 400 naming the field, unknown fields passed through. */
import { describe, expect, it, vi } from 'vitest';
import { FakeClock } from '../kit/testing/clock.ts';
import type { Operation } from '../plugin-api.ts';
import { chatBody, exchangeFor, runtimeOf, stageEnv } from '../pipeline/testing.ts';
import validate from './validate.ts';

async function check(body: unknown, operation: Operation = 'chat') {
  const stage = await validate.create({}, stageEnv(runtimeOf([]), new FakeClock()));
  const x = exchangeFor({ operation, body });
  const next = vi.fn(async () => {});
  const error = await stage.handle!(x.ctx, next).then(
    () => undefined,
    (err: unknown) => err,
  );
  return { next, error };
}

describe('validate', () => {
  it('passes a valid chat request, unknown fields included, to the next stage', async () => {
    const r = await check({ ...chatBody({ temperature: 0.5 }), a_parameter_from_next_year: { x: 1 } });
    expect(r.error).toBeUndefined();
    expect(r.next).toHaveBeenCalledTimes(1);
  });

  it.each([[[1, 2]], ['text'], [7]])('refuses a body that is not a JSON object (%j)', async (body) => {
    const r = await check(body);
    expect(r.error).toMatchObject({ code: 'invalid_request', status: 400, message: 'The request body must be a JSON object.' });
    expect(r.next).not.toHaveBeenCalled();
  });

  it("answers a missing top-level field with OpenAI's code and the field as param", async () => {
    const r = await check({ model: 'alias' });
    expect(r.error).toMatchObject({ code: 'missing_required_parameter', status: 400, param: 'messages', message: "Missing required parameter: 'messages'." });
  });

  it('names the invalid field in param and message', async () => {
    const r = await check(chatBody({ temperature: 7 }));
    expect(r.error).toMatchObject({ code: 'invalid_request', status: 400, param: 'temperature' });
    expect(String((r.error as Error).message)).toMatch(/^Invalid 'temperature': /);
    expect(r.next).not.toHaveBeenCalled();
  });

  it('checks an embeddings request against the embeddings schema', async () => {
    expect((await check({ model: 'e', input: 'text' }, 'embeddings')).error).toBeUndefined();
    expect((await check({ model: 'e' }, 'embeddings')).error).toMatchObject({ code: 'missing_required_parameter', param: 'input' });
    // The chat schema would want messages.
    expect((await check({ model: 'e', input: 'text' }, 'chat')).error).toMatchObject({ param: 'messages' });
  });
});
