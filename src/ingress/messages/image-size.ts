/**
 * The pixel size of an image from the first bytes of its file, for count_tokens: PNG (IHDR),
 * GIF (logical screen), WebP (VP8, VP8L, VP8X) and JPEG (the first SOF marker) — the four
 * formats the Messages API takes (https://docs.anthropic.com/en/docs/build-with-claude/vision).
 * Undefined for anything else or a file cut short: the caller then assumes the largest size.
 */
export interface ImageSize {
  width: number;
  height: number;
}

/** Base64 characters enough for every header below but JPEG's, which may need to skip EXIF segments. */
const HEAD_CHARS = 64 * 1024;

/** `data:image/...;base64,...` → the decoded head of the file. */
export function imageSizeOfDataUrl(url: string): ImageSize | undefined {
  const comma = url.indexOf(',');
  if (!url.startsWith('data:') || comma < 0 || !url.slice(0, comma).endsWith(';base64')) return undefined;
  // Whole 4-character groups only, so the cut never splits one.
  const head = url.slice(comma + 1, comma + 1 + HEAD_CHARS);
  return imageSizeOf(Buffer.from(head.slice(0, head.length - (head.length % 4)), 'base64'));
}

export function imageSizeOf(b: Buffer): ImageSize | undefined {
  if (b.length >= 24 && b.readUInt32BE(0) === 0x89504e47 && b.toString('latin1', 12, 16) === 'IHDR') return positive(b.readUInt32BE(16), b.readUInt32BE(20));
  if (b.length >= 10 && b.toString('latin1', 0, 4) === 'GIF8') return positive(b.readUInt16LE(6), b.readUInt16LE(8));
  if (b.length >= 30 && b.toString('latin1', 0, 4) === 'RIFF' && b.toString('latin1', 8, 12) === 'WEBP') return webpSize(b);
  if (b.length >= 4 && b[0] === 0xff && b[1] === 0xd8) return jpegSize(b);
  return undefined;
}

/** https://developers.google.com/speed/webp/docs/riff_container */
function webpSize(b: Buffer): ImageSize | undefined {
  switch (b.toString('latin1', 12, 16)) {
    case 'VP8 ':
      return positive(b.readUInt16LE(26) & 0x3fff, b.readUInt16LE(28) & 0x3fff);
    case 'VP8L': {
      const bits = b.readUInt32LE(21);
      return positive((bits & 0x3fff) + 1, ((bits >> 14) & 0x3fff) + 1);
    }
    case 'VP8X':
      return positive(b.readUIntLE(24, 3) + 1, b.readUIntLE(27, 3) + 1);
    default:
      return undefined;
  }
}

/** Segment by segment to the first start-of-frame (SOF0..SOF15 but DHT, JPG and DAC), which holds height then width. */
function jpegSize(b: Buffer): ImageSize | undefined {
  let at = 2;
  while (at + 9 <= b.length) {
    if (b[at] !== 0xff) return undefined;
    const marker = b[at + 1];
    if (marker === 0xff) {
      at++; // fill byte
      continue;
    }
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) return positive(b.readUInt16BE(at + 7), b.readUInt16BE(at + 5));
    at += 2 + b.readUInt16BE(at + 2);
  }
  return undefined;
}

const positive = (width: number, height: number): ImageSize | undefined => (width > 0 && height > 0 ? { width, height } : undefined);
