/**
 * Differential test: our SSE parser (through SseDecoder) against eventsource-parser 4, the engine
 * it replaced, fed the same bytes. Recorded provider streams and edge cases go through both under
 * many chunkings (every split point, one byte at a time, seeded random splits), and both must give
 * the same events, each returned by the same chunk.
 */
import { Buffer } from 'node:buffer';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createParser } from 'eventsource-parser';
import { describe, expect, it } from 'vitest';
import { mulberry32 } from './random.ts';
import { SseDecoder } from './sse.ts';

type Event = [data: string, event: string | undefined, id: string | undefined];
/** Per chunk fed (and one more for the end), the events it completed. */
type Batches = Event[][];

const utf8 = (text: string) => new TextEncoder().encode(text);

/** What SseDecoder did before: a TextDecoder in front of eventsource-parser; the end flushes the decoder. */
function reference(chunks: Uint8Array[]): Batches {
  const decoder = new TextDecoder();
  let batch: Event[] = [];
  const parser = createParser({ onEvent: (m) => batch.push([m.data, m.event, m.id]) });
  const out: Batches = [];
  for (const chunk of chunks) {
    parser.feed(decoder.decode(chunk, { stream: true }));
    out.push(batch);
    batch = [];
  }
  parser.feed(decoder.decode());
  out.push(batch);
  return out;
}

function ours(chunks: Uint8Array[]): Batches {
  const decoder = new SseDecoder();
  const out: Batches = chunks.map((chunk) => decoder.push(chunk).map((m): Event => [m.data, m.event, m.id]));
  out.push(decoder.end().map((m): Event => [m.data, m.event, m.id]));
  return out;
}

function split(bytes: Uint8Array, at: number[]): Uint8Array[] {
  const chunks: Uint8Array[] = [];
  let from = 0;
  for (const to of at) {
    chunks.push(bytes.subarray(from, to));
    from = to;
  }
  chunks.push(bytes.subarray(from));
  return chunks;
}

/** Asserts both decoders agree on `bytes` cut at `at`, as plain byte arrays and as Buffers (which SseDecoder may read without its TextDecoder); the failure names the cut. */
function agree(name: string, bytes: Uint8Array, at: number[]): void {
  const chunks = split(bytes, at);
  const expected = JSON.stringify(reference(chunks));
  for (const input of [chunks, chunks.map((c) => Buffer.from(c.buffer, c.byteOffset, c.byteLength))]) {
    const actual = ours(input);
    if (JSON.stringify(actual) !== expected) expect(actual, `${name}, cut at ${at.join(',')}, ${input[0] instanceof Buffer ? 'Buffers' : 'byte arrays'}`).toEqual(reference(chunks));
  }
}

function randomCuts(length: number, random: () => number): number[] {
  const cuts: number[] = [];
  for (let at = 0; ; ) {
    at += 1 + Math.floor(random() * 24);
    if (at >= length) return cuts;
    cuts.push(at);
  }
}

/** Every chunking the brief of this test promises; `stride` thins the split points of a long stream. */
function allChunkings(name: string, bytes: Uint8Array, random: () => number, stride = 1): void {
  agree(name, bytes, []);
  for (let at = 1; at < bytes.length; at += stride) agree(name, bytes, [at]);
  agree(
    name,
    bytes,
    Array.from({ length: Math.max(0, bytes.length - 1) }, (_, i) => i + 1),
  );
  for (let i = 0; i < 20; i++) agree(name, bytes, randomCuts(bytes.length, random));
}

const fixtures = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../test/fixtures');

function recordedStreams(): string[] {
  const files: string[] = [];
  for (const provider of readdirSync(fixtures, { withFileTypes: true })) {
    if (!provider.isDirectory()) continue;
    for (const file of readdirSync(path.join(fixtures, provider.name))) if (file.endsWith('.sse')) files.push(path.join(provider.name, file));
  }
  return files.sort();
}

const EDGE_CASES: Record<string, string | number[]> = {
  lf: 'data: a\n\nevent: e\nid: 1\ndata: b\n\ndata: [DONE]\n\n',
  crlf: 'data: a\r\n\r\nevent: e\r\ndata: b\r\n\r\n',
  cr: 'data: a\r\revent: e\rdata: b\r\r',
  mixed: 'data: a\r\n\ndata: b\r\rdata: c\n\r\ndata: d\r\r\n\n\r\r\n\r\n',
  'cr then crlf': 'data: a\r\r\ndata: b\r\n\r\n',
  'only blank lines': '\n\n\r\n\r\r\n\r',
  'bom decoded': '\uFEFFdata: x\n\n',
  'two boms': '\uFEFF\uFEFFdata: x\n\n',
  'bom as latin-1 text': '\u00EF\u00BB\u00BFdata: x\n\n',
  'half a latin-1 bom': '\u00EF\u00BBdata: x\n\n',
  'bom later': 'data: x\n\n\uFEFFdata: y\n\n',
  comments: ': keep-alive\n\n:ping\ndata: x\n: between\ndata: y\n\n:\n\n',
  'multi-line data': 'data: first\ndata: second\ndata:\ndata: fourth\n\n',
  'empty data lines': 'data\n\ndata:\n\ndata: \n\ndata:  two spaces\n\n',
  'fields without colon': 'event\ndata\n\nid\ndata: x\n\nfoo\ndata\ndata\n\n',
  'unknown and near fields': 'dataa: x\ndata : y\nData: z\ndat: w\nevents: v\nidx: 1\n\ndata: ok\n\n',
  retry: 'retry: 1000\ndata: x\n\nretry: soon\ndata: y\n\nretry\n\n',
  'event reset after dispatch': 'event: a\ndata: 1\n\ndata: 2\n\nevent: b\nevent:\ndata: 3\n\n',
  'event without data is not dispatched': 'event: a\nid: 9\n\ndata: x\n\nevent: b\n\n',
  ids: 'id: 1\ndata: x\n\ndata: y\n\nid: a\u0000b\ndata: z\n\nid\ndata: w\n\nid: 2\nid: a\u0000\ndata: v\n\n',
  'colons in values': 'data: a:b: c\nevent: x:y\n\ndata::\n\n',
  'colon after the line end': 'foo\rdata: x:y\r\rbar\ndata\n:\n\n',
  'multi-byte characters': 'data: café € 😀 ñandú\n\nevent: 日本\ndata: 中文\r\n\r\n',
  'bytes that are not utf-8': [0x64, 0x61, 0x74, 0x61, 0x3a, 0x20, 0xff, 0xfe, 0x41, 0xc3, 0x0a, 0x0a, 0x64, 0x61, 0x74, 0x61, 0x0a, 0x0a],
  'truncated character at the end': [...utf8('data: a\n\ndata: '), 0xe2, 0x82],
  'truncated tail': 'data: complete\n\ndata: {"partial":',
  'tail ending in cr': 'data: complete\n\ndata: x\r',
  'tail ending in a blank cr': 'data: x\r\r',
  'nul and controls': 'data: a\u0000b\tc\n\n',
};

describe('SseParser against eventsource-parser', () => {
  it('edge cases, under every chunking', () => {
    const random = mulberry32(24);
    for (const [name, text] of Object.entries(EDGE_CASES)) {
      allChunkings(name, typeof text === 'string' ? utf8(text) : Uint8Array.from(text), random);
    }
  });

  it('recorded provider streams (test/fixtures), under every chunking', () => {
    const files = recordedStreams();
    expect(files.length).toBeGreaterThan(10);
    const random = mulberry32(2026);
    for (const file of files) {
      const bytes = new Uint8Array(readFileSync(path.join(fixtures, file)));
      expect(ours([bytes]).flat().length, `${file} has events`).toBeGreaterThan(0);
      // Every split point of the short streams; of the longer ones one in 7 or 97 (primes, so they wander across lines).
      allChunkings(file, bytes, random, bytes.length <= 4000 ? 1 : bytes.length <= 8000 ? 7 : 97);
    }
  });

  it('random streams of SSE pieces, randomly cut', () => {
    const pieces = ['data', 'event', 'id', 'retry', 'foo', ':', ': ', ' ', 'x', '{"a":1}', 'é', '😀', '\n', '\n', '\r', '\r\n', '\n\n', '\u0000', '\uFEFF', 'data: ', 'event: ', 'id: '];
    const random = mulberry32(7);
    for (let n = 0; n < 400; n++) {
      let text = '';
      const length = 1 + Math.floor(random() * 40);
      for (let i = 0; i < length; i++) text += pieces[Math.floor(random() * pieces.length)];
      const bytes = utf8(text);
      for (let i = 0; i < 10; i++) agree(JSON.stringify(text), bytes, randomCuts(bytes.length, random));
      agree(
        JSON.stringify(text),
        bytes,
        Array.from({ length: Math.max(0, bytes.length - 1) }, (_, i) => i + 1),
      );
    }
  });

  it('the comparison can fail: a decoder that drops CR line ends differs', () => {
    const chunks = [utf8('data: a\r\rdata: b\n\n')];
    const dropped = reference(chunks.map((c) => utf8(new TextDecoder().decode(c).replaceAll('\r', ''))));
    expect(ours(chunks)).not.toEqual(dropped);
  });
});
