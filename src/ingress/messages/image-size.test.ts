import { describe, expect, it } from 'vitest';
import { loadFixture } from 'switchyard-gateway/kit/testing';
import { imageSizeOf, imageSizeOfDataUrl } from './image-size.ts';

const ANTHROPIC = new URL('../../../test/fixtures/anthropic/', import.meta.url);

const bytes = (...parts: Array<string | number[] | Buffer>) => Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'latin1') : Buffer.from(p))));
const u32be = (n: number) => [(n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255];
const u16le = (n: number) => [n & 255, (n >>> 8) & 255];
const u24le = (n: number) => [n & 255, (n >>> 8) & 255, (n >>> 16) & 255];

describe('imageSizeOf', () => {
  it('the recorded JPEG (JFIF and EXIF segments before the frame)', () => {
    const source = loadFixture(ANTHROPIC, 'messages-image-input-base64').request.messages[0].content[1].source;
    expect(imageSizeOfDataUrl(`data:${source.media_type};base64,${source.data}`)).toEqual({ width: 540, height: 360 });
  });

  it('PNG', () => {
    expect(imageSizeOf(bytes([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], u32be(13), 'IHDR', u32be(1920), u32be(1080)))).toEqual({ width: 1920, height: 1080 });
  });

  it('GIF', () => {
    expect(imageSizeOf(bytes('GIF89a', u16le(320), u16le(200)))).toEqual({ width: 320, height: 200 });
  });

  it('WebP: lossy (VP8), lossless (VP8L) and extended (VP8X)', () => {
    const riff = (chunk: string, body: number[]) => bytes('RIFF', [0, 0, 0, 0], 'WEBP', chunk, [0, 0, 0, 0], body);
    expect(imageSizeOf(riff('VP8 ', [0, 0, 0, 0x9d, 0x01, 0x2a, ...u16le(800), ...u16le(600), 0, 0]))).toEqual({ width: 800, height: 600 });
    const bits = (1023 & 0x3fff) | ((767 & 0x3fff) << 14);
    expect(imageSizeOf(riff('VP8L', [0x2f, bits & 255, (bits >>> 8) & 255, (bits >>> 16) & 255, (bits >>> 24) & 255, 0, 0, 0, 0, 0]))).toEqual({ width: 1024, height: 768 });
    expect(imageSizeOf(riff('VP8X', [0, 0, 0, 0, ...u24le(4095), ...u24le(2047), 0, 0]))).toEqual({ width: 4096, height: 2048 });
  });

  it('anything else, or a file cut short, is undefined', () => {
    expect(imageSizeOf(bytes('not an image at all, really not'))).toBeUndefined();
    expect(imageSizeOf(bytes([0xff, 0xd8, 0xff, 0xe0, 0, 16]))).toBeUndefined();
    expect(imageSizeOfDataUrl('https://example.com/a.png')).toBeUndefined();
    expect(imageSizeOfDataUrl('data:image/png,raw')).toBeUndefined();
  });
});
