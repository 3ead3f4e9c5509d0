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
  const list = [...new Set([...secrets].filter((s) => s.length >= SHORTEST_SECRET))];
  if (list.length === 0) return (text) => text;
  const forms = new Set<string>();
  for (const s of list) for (const form of encodedForms(s)) forms.add(form);
  // Forms shorter than a fragment are matched whole; longer ones by any 12-character window.
  const whole = [...forms].filter((f) => f.length < FRAGMENT).sort((a, b) => b.length - a.length);
  const windows = new Set<string>();
  for (const f of forms) if (f.length >= FRAGMENT) for (let i = 0; i + FRAGMENT <= f.length; i++) windows.add(f.slice(i, i + FRAGMENT));

  return function redact(text: string): string {
    if (typeof text !== 'string' || text.length === 0) return text;
    let out = text;
    for (const w of whole) if (out.includes(w)) out = out.replaceAll(w, MASK);
    if (out.length < FRAGMENT) return out;
    // Mark every character covered by a window that is a fragment of a secret form.
    let covered: Uint8Array | undefined;
    for (let i = 0; i + FRAGMENT <= out.length; i++) {
      if (!windows.has(out.slice(i, i + FRAGMENT))) continue;
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
