import { describe, expect, it } from 'vitest';
import { causeOf } from './case.ts';

describe('causeOf: the error a failed client printed, stable across runs', () => {
  it('reads a JSON error envelope and the status before it', () => {
    const log = `ERROR: {"error":{"message":"Unknown parameter: 'client_metadata'.","type":"invalid_request_error"}}\nBadRequestError: 400 {"type":"error","error":{"message":"x"},"request_id":"req_abc123"}`;
    expect(causeOf(log)).toBe("400 Unknown parameter: 'client_metadata'.");
  });
  it("reads Claude Code's API Error line", () => {
    expect(causeOf("API Error: 400 The parameter 'thread' is only supported here")).toBe("400 The parameter 'thread' is only supported here");
  });
  it("reads an SDK error's status and message", () => {
    expect(causeOf("AI_APICallError: 400 Invalid 'input[1]': item references are not served")).toBe("400 Invalid 'input[1]': item references are not served");
  });
  it('reads a status alone, and takes request ids out', () => {
    expect(causeOf('  at Turn.run (x.js:1:2) {\n  status: 404\n}')).toBe('404');
    expect(causeOf('{"message":"no item msg_0a1b2c here"}')).toBe('no item … here');
  });
  it('says nothing when there is no error to read', () => {
    expect(causeOf('all fine')).toBeUndefined();
  });
});
