/**
 * Redact and restore: matched text becomes a typed placeholder (`[EMAIL_1]`; the same value the
 * same placeholder throughout a request), and the originals can be put back into the answer so
 * the user sees them while the provider never did. One vault per request; it lives in memory
 * only as long as the request.
 */
import type { Finding } from './detect/index.ts';

const PLACEHOLDER = /\[([A-Z][A-Z0-9_]*)_(\d+)\]/g;
/** The longest placeholder a stream restorer may have to wait for. */
const MAX_PLACEHOLDER = 40;

export class Vault {
  readonly #byValue = new Map<string, string>();
  readonly #byPlaceholder = new Map<string, string>();
  readonly #counts = new Map<string, number>();

  get size(): number {
    return this.#byPlaceholder.size;
  }

  placeholder(label: string, value: string): string {
    const key = `${label}\u0000${value}`;
    let placeholder = this.#byValue.get(key);
    if (!placeholder) {
      const n = (this.#counts.get(label) ?? 0) + 1;
      this.#counts.set(label, n);
      placeholder = `[${label}_${n}]`;
      this.#byValue.set(key, placeholder);
      this.#byPlaceholder.set(placeholder, value);
    }
    return placeholder;
  }

  /** `text` with each finding replaced by its placeholder (findings in order, not overlapping). */
  redact(text: string, findings: readonly Finding[]): string {
    if (findings.length === 0) return text;
    let out = '';
    let at = 0;
    for (const f of findings) {
      out += text.slice(at, f.start) + this.placeholder(f.label, text.slice(f.start, f.end));
      at = f.end;
    }
    return out + text.slice(at);
  }

  /** `text` with this vault's placeholders put back; `encode` escapes an original for where it goes (JSON strings). */
  restore(text: string, encode: (original: string) => string = (s) => s): string {
    if (this.#byPlaceholder.size === 0) return text;
    return text.replace(PLACEHOLDER, (whole) => {
      const original = this.#byPlaceholder.get(whole);
      return original === undefined ? whole : encode(original);
    });
  }

  /** A restorer for text in pieces: holds only a trailing `[` that could still open a placeholder. */
  restorer(encode?: (original: string) => string): { push(piece: string): string; end(): string } {
    let held = '';
    return {
      push: (piece) => {
        const text = held + piece;
        const open = text.lastIndexOf('[');
        const tail = open < 0 ? '' : text.slice(open);
        const mayOpen = open >= 0 && tail.length < MAX_PLACEHOLDER && /^\[[A-Z0-9_]*$/.test(tail);
        held = mayOpen ? tail : '';
        return this.restore(mayOpen ? text.slice(0, open) : text, encode);
      },
      end: () => {
        const text = held;
        held = '';
        return this.restore(text, encode);
      },
    };
  }
}
