/** The SSE reader over raw body chunks: line endings, comments, multi-line data, BOM, split chunks, truncated tails. */
import { describe, expect, it } from 'vitest';
import { SSE_DONE, SSE_HEADERS, SseDecoder, type SseMessage, readSse, sseData } from './sse.ts';

const utf8 = (text: string) => new TextEncoder().encode(text);

/** A body that yields the given chunks (strings are UTF-8 encoded, byte arrays go as they are). */
async function* body(...chunks: Array<string | Uint8Array | number[]>): AsyncGenerator<Uint8Array> {
  for (const c of chunks) yield typeof c === 'string' ? utf8(c) : Uint8Array.from(c);
}

async function read(source: AsyncIterable<Uint8Array>): Promise<SseMessage[]> {
  const out: SseMessage[] = [];
  for await (const m of readSse(source)) out.push(m);
  return out;
}

const datas = (messages: SseMessage[]) => messages.map((m) => m.data);

describe('readSse', () => {
  it('reads data events separated by blank lines, with event and id fields', async () => {
    const messages = await read(body('data: {"a":1}\n\nevent: message_start\nid: 7\ndata: {"b":2}\n\ndata: [DONE]\n\n'));
    expect(messages).toHaveLength(3);
    expect(messages[0]).toMatchObject({ data: '{"a":1}' });
    expect(messages[0].event).toBeUndefined();
    expect(messages[0].id).toBeUndefined();
    expect(messages[1]).toMatchObject({ event: 'message_start', id: '7', data: '{"b":2}' });
    expect(messages[2]).toMatchObject({ data: '[DONE]' });
  });

  it('CRLF line endings (Gemini) and lone CR', async () => {
    expect(datas(await read(body('data: one\r\n\r\ndata: two\r\n\r\n')))).toEqual(['one', 'two']);
    expect(datas(await read(body('data: one\r\rdata: two\r\r')))).toEqual(['one', 'two']);
  });

  it('a CRLF split between two chunks is one line ending, not two', async () => {
    expect(datas(await read(body('data: one\r', '\ndata: more\r\n\r\n')))).toEqual(['one\nmore']);
  });

  it('comment lines (keep-alives) are skipped, also between the lines of one event', async () => {
    expect(datas(await read(body(': keep-alive\n\n:ping\ndata: x\n: in between\ndata: y\n\n')))).toEqual(['x\ny']);
  });

  it('multi-line data is joined with \\n', async () => {
    expect(datas(await read(body('data: first\ndata: second\ndata:\ndata: fourth\n\n')))).toEqual(['first\nsecond\n\nfourth']);
  });

  it('only the single space after the colon is removed; "data:" without a space works', async () => {
    expect(datas(await read(body('data:tight\n\ndata:  two spaces\n\n')))).toEqual(['tight', ' two spaces']);
  });

  it('a UTF-8 byte order mark at the start is ignored', async () => {
    const messages = await read(body([0xef, 0xbb, 0xbf], 'data: after bom\n\n'));
    expect(datas(messages)).toEqual(['after bom']);
    expect(datas(await read(body('\uFEFFdata: x\n\n')))).toEqual(['x']);
  });

  it('a chunk boundary in the middle of a field name, a value or the blank line', async () => {
    expect(datas(await read(body('da', 'ta: {"con', 'tent":"hi"}\n', '\n', 'data: b\n\n')))).toEqual(['{"content":"hi"}', 'b']);
  });

  it('a chunk boundary inside a multi-byte UTF-8 character (2, 3 and 4 bytes)', async () => {
    const bytes = utf8('data: café € 😀\n\n');
    const e = bytes.indexOf(0xc3); // é: c3 a9
    const euro = bytes.indexOf(0xe2); // €: e2 82 ac
    const emoji = bytes.indexOf(0xf0); // 😀: f0 9f 98 80
    const chunks = [bytes.slice(0, e + 1), bytes.slice(e + 1, euro + 2), bytes.slice(euro + 2, emoji + 3), bytes.slice(emoji + 3)];
    expect(datas(await read(body(...chunks)))).toEqual(['café € 😀']);
  });

  it('one byte at a time gives the same events', async () => {
    const bytes = utf8('event: delta\r\ndata: ñandú\r\n: c\r\ndata: 2\r\n\r\ndata: [DONE]\r\n\r\n');
    const messages = await read(body(...Array.from(bytes, (b) => [b])));
    expect(messages.map((m) => [m.event, m.data])).toEqual([
      ['delta', 'ñandú\n2'],
      [undefined, '[DONE]'],
    ]);
  });

  it('a truncated last event (no blank line after it) is dropped', async () => {
    expect(datas(await read(body('data: complete\n\ndata: {"partial":')))).toEqual(['complete']);
    expect(datas(await read(body('data: complete\n\ndata: whole line, no blank line\n')))).toEqual(['complete']);
  });

  it('an empty body, or one of only comments, yields nothing', async () => {
    expect(await read(body())).toEqual([]);
    expect(await read(body(': hello\n\n'))).toEqual([]);
  });

  it('yields each event as soon as its chunk arrived, before the next chunk is pulled', async () => {
    const log: string[] = [];
    async function* slow(): AsyncGenerator<Uint8Array> {
      log.push('pull 1');
      yield utf8('data: a\n\ndata: b\n\n');
      log.push('pull 2');
      yield utf8('data: c\n\n');
    }
    for await (const m of readSse(slow())) log.push(`event ${m.data}`);
    expect(log).toEqual(['pull 1', 'event a', 'event b', 'pull 2', 'event c']);
  });

  it('stops reading the body when the consumer stops', async () => {
    let finished = false;
    async function* endless(): AsyncGenerator<Uint8Array> {
      try {
        for (;;) yield utf8('data: tick\n\n');
      } finally {
        finished = true;
      }
    }
    for await (const m of readSse(endless())) {
      expect(m.data).toBe('tick');
      break;
    }
    expect(finished).toBe(true);
  });
});

describe('SseDecoder', () => {
  it('an event longer than the limit without ending is a SyntaxError; a completed event starts the count again', () => {
    const decoder = new SseDecoder(64);
    expect(decoder.push(utf8(`data: ${'a'.repeat(40)}`))).toEqual([]);
    expect(decoder.push(utf8('\n\n')).map((m) => m.data)).toEqual(['a'.repeat(40)]);
    expect(decoder.push(utf8(`data: ${'b'.repeat(50)}`))).toEqual([]);
    expect(() => decoder.push(utf8('b'.repeat(20)))).toThrow(new SyntaxError('a stream event is longer than 64 bytes without ending'));
  });

  it('one long line in many small Buffer chunks reads back whole, and a pushTo sink gets each event once', () => {
    const payload = JSON.stringify({ text: 'é€😀'.repeat(4000) });
    const bytes = Buffer.from(`event: big\ndata: ${payload}\n\ndata: after\n\n`);
    const decoder = new SseDecoder();
    const got: Array<[string, string | undefined]> = [];
    const sink = { sseEvent: (data: string, event: string | undefined) => got.push([data, event]) };
    let count = 0;
    for (let at = 0; at < bytes.length; at += 7) count += decoder.pushTo(bytes.subarray(at, at + 7), sink);
    count += decoder.endTo(sink);
    expect(got).toEqual([
      [payload, 'big'],
      ['after', undefined],
    ]);
    expect(count).toBe(2);
  });
});

describe('writing', () => {
  it('sseData frames one JSON payload as a data event', () => {
    expect(sseData({ a: 1, s: 'x\ny' })).toBe('data: {"a":1,"s":"x\\ny"}\n\n');
  });

  it('SSE_DONE is the OpenAI terminator', () => {
    expect(SSE_DONE).toBe('data: [DONE]\n\n');
  });

  it('what is written reads back', async () => {
    const messages = await read(body(sseData({ n: 1 }), sseData({ n: 2 }), SSE_DONE));
    expect(datas(messages)).toEqual(['{"n":1}', '{"n":2}', '[DONE]']);
  });

  it('SSE_HEADERS: event-stream, no caching, no proxy buffering', () => {
    expect(SSE_HEADERS).toEqual({ 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' });
  });
});
