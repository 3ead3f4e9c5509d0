/**
 * Scanning text that arrives in pieces (a streamed answer, tool-call arguments) without holding
 * the stream: each piece releases all the text that can no longer become part of a match, and
 * holds only the tail that still could (the last word in prose; an open private key block until
 * its END). A match split across two pieces is found whole.
 */
import { pendingFrom, scan, type Detector, type Finding } from './detect/index.ts';

/** Text released by the scanner, final, with what was found in it (offsets into `text`). */
export interface Released {
  text: string;
  findings: Finding[];
}

/** Characters of released text kept as left context, so a match's boundary checks see what preceded it. */
const CONTEXT = 64;

export class StreamScanner {
  readonly #detectors: readonly Detector[];
  readonly #maxHold: number;
  #pending = '';
  #context = '';

  /** `maxHold` bounds what is held whatever the detectors say (a key block that never ends). */
  constructor(detectors: readonly Detector[], maxHold = 16_384) {
    this.#detectors = detectors;
    this.#maxHold = maxHold;
  }

  /** Characters held now (for tests and the hold-back figure in the benchmark). */
  get held(): number {
    return this.#pending.length;
  }

  push(piece: string): Released {
    if (piece === '') return { text: '', findings: [] };
    this.#pending += piece;
    return this.#release(false);
  }

  /** The stream ended: everything held is final. */
  end(): Released {
    return this.#release(true);
  }

  #release(final: boolean): Released {
    const offset = this.#context.length;
    const buffer = this.#context + this.#pending;
    const found = scan(buffer, this.#detectors).filter((f) => f.start >= offset);
    let cut = buffer.length;
    if (!final) {
      cut = Math.max(offset, pendingFrom(buffer, this.#detectors));
      // A match that reaches into the undecided tail may still grow: hold it whole.
      for (const f of found) if (f.start < cut && f.end >= cut) cut = f.start;
      cut = Math.max(cut, buffer.length - this.#maxHold);
    }
    const findings: Finding[] = [];
    for (const f of found) {
      if (f.start >= cut) break;
      findings.push({ ...f, start: f.start - offset, end: Math.min(f.end, cut) - offset });
    }
    const text = buffer.slice(offset, cut);
    this.#pending = buffer.slice(cut);
    this.#context = (this.#context + text).slice(-CONTEXT);
    return { text, findings };
  }
}
