/** What the guardrails look for: detectors find spans of text and say how much of a text's end is still undecided. */

/** One span a detector matched. Never logged or sent: verdicts carry `rule` and `label` only. */
export interface Finding {
  start: number;
  end: number;
  /** The placeholder's kind when redacted: `EMAIL` → `[EMAIL_1]`. */
  label: string;
  /** The detector (or custom rule) that matched: `email`, `card`, `custom:project-names`. */
  detector: string;
}

export interface Detector {
  readonly id: string;
  readonly label: string;
  find(text: string): Finding[];
  /**
   * For text that arrives in pieces (a stream): the index from which the end of `text` could
   * still become (part of) a match once more text arrives. Text before it is final for this
   * detector. A few characters in prose (the last word), never more than the detector's
   * longest match.
   */
  pendingFrom(text: string): number;
}

/** The start of the trailing run of `chars` (one-character class), at most `maxSpan` long. */
export function trailingRun(text: string, chars: RegExp, maxSpan: number): number {
  let i = text.length;
  const stop = Math.max(0, text.length - maxSpan);
  while (i > stop && chars.test(text[i - 1])) i--;
  return i;
}

/** A detector from a global regex and a check of each match (checksums, boundaries). */
export function regexDetector(spec: {
  id: string;
  label: string;
  pattern: RegExp;
  /** One character that can appear in a match (for `pendingFrom`). */
  chars: RegExp;
  maxSpan: number;
  accept?: (match: string, text: string, start: number) => boolean;
}): Detector {
  const { id, label, pattern, chars, maxSpan, accept } = spec;
  if (!pattern.global) throw new Error(`detector ${id}: the pattern must be global`);
  return {
    id,
    label,
    find(text) {
      const out: Finding[] = [];
      pattern.lastIndex = 0;
      for (let m = pattern.exec(text); m; m = pattern.exec(text)) {
        if (m[0].length === 0) {
          pattern.lastIndex++;
          continue;
        }
        if (!accept || accept(m[0], text, m.index)) out.push({ start: m.index, end: m.index + m[0].length, label, detector: id });
      }
      return out;
    },
    pendingFrom: (text) => trailingRun(text, chars, maxSpan),
  };
}
