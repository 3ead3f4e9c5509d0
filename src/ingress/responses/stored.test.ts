import { describe, expect, it } from 'vitest';
import { SqliteResponseBackend } from '../../responses-store/sqlite-backend.ts';
import { ResponseStore } from '../../responses-store/store.ts';
import { DEFAULT_RESPONSES_STORE } from '../../responses-store/types.ts';
import { readResponsesRequest } from './request.ts';
import { expandStored, recorder, selfContainedBody } from './stored.ts';

const store = () => new ResponseStore(new SqliteResponseBackend({ path: ':memory:', maxEntries: 100 }), DEFAULT_RESPONSES_STORE, { warn: () => undefined });
const alice = () => ({ name: 'alice', allows: () => true });
const answered = (id: string, text: string) => ({
  id,
  object: 'response',
  status: 'completed',
  output: [{ type: 'message', id: `msg_${id}_0`, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text, annotations: [] }] }],
});

describe('expandStored', () => {
  it('a string input stays as sent when there is no chain; it is kept as a message item with an id', async () => {
    const s = store();
    const { request, stored } = await expandStored(readResponsesRequest({ model: 'm', input: 'hi' }), { store: s, key: alice, responseId: 'resp_r1' });
    expect(request.input).toBe('hi');
    expect(stored?.input).toEqual([{ type: 'message', id: 'msg_r1_in0', role: 'user', content: [{ type: 'input_text', text: 'hi' }] }]);
    expect(stored?.owner).toBe('key:alice');
  });

  it('previous_response_id puts the chain before the input, and the record names the chain', async () => {
    const s = store();
    const first = await expandStored(readResponsesRequest({ model: 'm', input: 'one' }), { store: s, key: alice, responseId: 'resp_r1' });
    await recorder(first.stored)(answered('resp_r1', 'first answer'));
    const { request, stored } = await expandStored(readResponsesRequest({ model: 'm', input: 'two', previous_response_id: 'resp_r1' }), { store: s, key: alice, responseId: 'resp_r2' });
    expect(request.input).toEqual([
      { type: 'message', id: 'msg_r1_in0', role: 'user', content: [{ type: 'input_text', text: 'one' }] },
      answered('resp_r1', 'first answer').output[0],
      { type: 'message', role: 'user', content: 'two' },
    ]);
    expect(request.previous_response_id).toBe('resp_r1');
    expect(stored?.chain).toEqual(['resp_r1']);
    // The body a native Responses target would get: self-contained, nothing for it to store.
    const body = selfContainedBody({ model: 'm', input: 'two', previous_response_id: 'resp_r1', store: true }, request);
    expect(body).toEqual({ model: 'm', input: request.input, store: false });
  });

  it('an unknown previous_response_id is 400 previous_response_not_found; an unknown item_reference 404', async () => {
    const s = store();
    await expect(expandStored(readResponsesRequest({ model: 'm', input: 'x', previous_response_id: 'resp_nope' }), { store: s, key: alice, responseId: 'resp_r' })).rejects.toMatchObject({
      status: 400,
      code: 'previous_response_not_found',
      param: 'previous_response_id',
    });
    await expect(expandStored(readResponsesRequest({ model: 'm', input: [{ type: 'item_reference', id: 'msg_nope' }] }), { store: s, key: alice, responseId: 'resp_r' })).rejects.toMatchObject({
      status: 404,
      code: 'response_not_found',
      param: 'input[0]',
    });
  });

  it('store: false without references reads and keeps nothing; without a store, previous_response_id is refused', async () => {
    const none = await expandStored(readResponsesRequest({ model: 'm', input: 'x', store: false }), { store: store(), key: () => undefined, responseId: 'resp_r' });
    expect(none.stored).toBeUndefined();
    expect(none.request.input).toBe('x');
    const off = await expandStored(readResponsesRequest({ model: 'm', input: 'x' }), { store: undefined, key: alice, responseId: 'resp_r' });
    expect(off.request.store).toBe(false);
    await expect(expandStored(readResponsesRequest({ model: 'm', input: 'x', previous_response_id: 'resp_1' }), { store: undefined, key: alice, responseId: 'resp_r' })).rejects.toMatchObject({
      code: 'unsupported_parameter',
      param: 'previous_response_id',
    });
  });
});
