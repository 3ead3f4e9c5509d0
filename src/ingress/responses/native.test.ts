/** A passed-through Responses stream as the writer sees it: the upstream's events as they came, when it has started, and how a failure ends it. */
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../errors.ts';
import type { ExchangeAttempt } from '../../pipeline/exchange.ts';
import { ResponsesNativeEvents } from './native.ts';

/** An attempt whose native events are handed out as the test queues them (only takeNativeEvents is read). */
function attemptWith(queue: unknown[]): ExchangeAttempt {
  // A fake with the one method the writer calls.
  return { takeNativeEvents: () => queue.splice(0, queue.length) } as unknown as ExchangeAttempt;
}

const created = { type: 'response.created', sequence_number: 0, response: { id: 'resp_up', object: 'response', status: 'in_progress', model: 'gpt-x', output: [] } };
const raw = (data: { type: string }) => ({ event: data.type, data, raw: JSON.stringify(data) });
const names = (text: string) => [...text.matchAll(/^event: (.+)$/gm)].map((m) => m[1]);
const datas = (text: string) => [...text.matchAll(/^data: (.+)$/gm)].map((m) => JSON.parse(m[1]));

describe('ResponsesNativeEvents', () => {
  it('writes the data as it arrived and starts at the first event past the opening ones', () => {
    const queue: unknown[] = [{ event: 'response.created', data: created, raw: '{"type":"response.created", "spacing":"kept"}' }];
    const events = new ResponsesNativeEvents(attemptWith(queue));
    expect(events.push()).toBe('event: response.created\ndata: {"type":"response.created", "spacing":"kept"}\n\n');
    expect(events.started).toBe(false);
    queue.push(raw({ type: 'response.output_item.added' }));
    events.push();
    expect(events.started).toBe(true);
  });

  it('a failure the upstream did not report: an error event and response.failed for the response it opened, numbered on', () => {
    const queue: unknown[] = [raw(created), raw({ type: 'response.output_text.delta', sequence_number: 4 } as { type: string })];
    const events = new ResponsesNativeEvents(attemptWith(queue));
    events.push();
    const text = events.fail(new GatewayError('upstream_error', 'the upstream connection closed'));
    expect(names(text)).toEqual(['error', 'response.failed']);
    const [error, failed] = datas(text);
    expect(error).toMatchObject({ type: 'error', message: 'the upstream connection closed', sequence_number: 5 });
    expect(failed).toMatchObject({ type: 'response.failed', sequence_number: 6, response: { id: 'resp_up', status: 'failed', error: { code: 'server_error' } } });
  });

  it("the upstream's own error event stands (with a response.failed after it); its own response.failed ends it alone", () => {
    const upstreamError = { type: 'error', sequence_number: 7, code: 'server_error', message: 'boom' };
    const queue: unknown[] = [raw(created), raw(upstreamError)];
    const events = new ResponsesNativeEvents(attemptWith(queue));
    const text = events.fail(new GatewayError('upstream_error', 'boom'));
    expect(names(text)).toEqual(['response.created', 'error', 'response.failed']);
    expect(datas(text)[1]).toEqual(upstreamError);
    const failed = { type: 'response.failed', sequence_number: 3, response: { id: 'resp_up', status: 'failed' } };
    const alone = new ResponsesNativeEvents(attemptWith([raw(failed)]));
    expect(names(alone.fail(new GatewayError('upstream_error', 'x')))).toEqual(['response.failed']);
  });
});
