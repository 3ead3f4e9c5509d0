/**
 * Scrubs configured secrets (provider keys, gateway keys) from text bound for a client or a log.
 * An upstream may echo a key in another form, so each secret is looked for raw, URL-encoded,
 * base64 and base64url (in all three byte alignments, so a key inside a longer encoded text such
 * as `basic <base64 of user:key>` is found too), and as any 12-character fragment of those.
 * Built once per config generation; it runs only on error paths (messages and attempt logs).
 */

/** A fragment this long of a secret (or of an encoding of it) is treated as the secret. */
export const FRAGMENT = 12;
const SHORTEST_SECRET = 6;
const MASK = '[REDACTED]';

export function makeRedactor(secrets: Iterable<string>): (text: string) => string {
  return redactorFrom(redactionIndex(secrets));
}

/**
 * What a redactor looks for: forms shorter than a fragment, matched whole, and a hash of every
 * 12-character window of the longer ones, sorted. Hashes in a typed array, not a Set of strings:
 * 10,000 keys make ~2.5 million windows, which as strings took seconds to build and hundreds of
 * MB; as numbers they are built by a reload's worker thread and handed over without a copy.
 * Two windows sharing a 52-bit hash would over-redact one 12-character fragment, never leak.
 */
export interface RedactionIndex {
  whole: string[];
  windows: Float64Array;
}

export function redactionIndex(secrets: Iterable<string>): RedactionIndex {
  const list = [...new Set([...secrets].filter((s) => s.length >= SHORTEST_SECRET))];
  const forms = new Set<string>();
  for (const s of list) for (const form of encodedForms(s)) forms.add(form);
  // Forms shorter than a fragment are matched whole; longer ones by any 12-character window.
  const whole = [...forms].filter((f) => f.length < FRAGMENT).sort((a, b) => b.length - a.length);
  let count = 0;
  for (const f of forms) if (f.length >= FRAGMENT) count += f.length - FRAGMENT + 1;
  const windows = new Float64Array(count);
  let n = 0;
  for (const f of forms) if (f.length >= FRAGMENT) for (let i = 0; i + FRAGMENT <= f.length; i++) windows[n++] = windowHash(f, i);
  windows.sort();
  return { whole, windows };
}

export function redactorFrom({ whole, windows }: RedactionIndex): (text: string) => string {
  if (whole.length === 0 && windows.length === 0) return (text) => text;
  return function redact(text: string): string {
    if (typeof text !== 'string' || text.length === 0) return text;
    let out = text;
    for (const w of whole) if (out.includes(w)) out = out.replaceAll(w, MASK);
    if (out.length < FRAGMENT || windows.length === 0) return out;
    // Mark every character covered by a window that is a fragment of a secret form.
    let covered: Uint8Array | undefined;
    for (let i = 0; i + FRAGMENT <= out.length; i++) {
      if (!sortedHas(windows, windowHash(out, i))) continue;
      covered ??= new Uint8Array(out.length);
      covered.fill(1, i, i + FRAGMENT);
    }
    if (!covered) return out;
    let result = '';
    for (let i = 0; i < out.length; ) {
      if (!covered[i]) {
        result += out[i++];
        continue;
      }
      while (i < out.length && covered[i]) i++;
      result += MASK;
    }
    return result;
  };
}

/** One index covering both (a generation's key secrets, built off-thread, and its plugins' few). */
export function mergeIndexes(a: RedactionIndex, b: RedactionIndex): RedactionIndex {
  if (b.whole.length === 0 && b.windows.length === 0) return a;
  const whole = [...new Set([...a.whole, ...b.whole])].sort((x, y) => y.length - x.length);
  const windows = new Float64Array(a.windows.length + b.windows.length);
  let i = 0;
  let j = 0;
  let n = 0;
  while (i < a.windows.length || j < b.windows.length) {
    windows[n++] = j >= b.windows.length || (i < a.windows.length && a.windows[i] <= b.windows[j]) ? a.windows[i++] : b.windows[j++];
  }
  return { whole, windows };
}

// Two 26-bit polynomial hashes side by side: exact in a double (< 2^52), no BigInt.
const P1 = 67_108_859;
const P2 = 67_108_837;
const TWO_26 = 67_108_864;

function windowHash(text: string, at: number): number {
  let a = 0;
  let b = 0;
  for (let i = at; i < at + FRAGMENT; i++) {
    const c = text.charCodeAt(i);
    a = (a * 131 + c) % P1;
    b = (b * 257 + c) % P2;
  }
  return a * TWO_26 + b;
}

function sortedHas(sorted: Float64Array, value: number): boolean {
  let lo = 0;
  let hi = sorted.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const v = sorted[mid];
    if (v === value) return true;
    if (v < value) lo = mid + 1;
    else hi = mid - 1;
  }
  return false;
}

/** The secret as it may be echoed: raw, URL-encoded, base64 and base64url in every alignment. */
export function encodedForms(secret: string): string[] {
  const forms = [secret, encodeURIComponent(secret)];
  const bytes = Buffer.from(secret, 'utf8');
  for (let pad = 0; pad < 3; pad++) {
    // With `pad` bytes before it, the secret's bytes start mid-group: drop the characters that
    // depend on the unknown neighbours, keep the stable core.
    const shifted = Buffer.concat([Buffer.alloc(pad), bytes]);
    const b64 = shifted.toString('base64').replace(/=+$/, '');
    const skip = pad === 0 ? 0 : pad === 1 ? 2 : 3;
    const keep = Math.floor(((pad + bytes.length) * 4) / 3) - 1; // last character may mix with what follows
    const core = b64.slice(skip, Math.max(skip, keep));
    if (core.length >= SHORTEST_SECRET) {
      forms.push(core, core.replaceAll('+', '-').replaceAll('/', '_'));
    }
  }
  return [...new Set(forms)];
}
