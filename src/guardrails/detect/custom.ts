/** Operators' own rules: a regular expression, or a list of words and phrases matched whole. */
import { regexDetector, type Detector } from './types.ts';

export interface CustomRule {
  /** Names the rule in verdicts, logs and metrics: `custom:<name>`. */
  name: string;
  /** The placeholder's kind when redacted (default the name in capitals). */
  label?: string;
  regex?: string;
  /** Regex flags besides `g` (e.g. `i`). */
  flags?: string;
  words?: readonly string[];
  caseSensitive?: boolean;
  /** The longest text the regex can match, for streams (default 128). */
  maxLength?: number;
}

const escapeRegex = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

export function customDetector(rule: CustomRule): Detector {
  const id = `custom:${rule.name}`;
  const label = rule.label ?? rule.name.toUpperCase().replace(/[^A-Z0-9]+/g, '_');
  if (rule.words) {
    const words = [...rule.words].sort((a, b) => b.length - a.length);
    const pattern = new RegExp(`(?<![\\p{L}\\p{N}_])(?:${words.map(escapeRegex).join('|')})(?![\\p{L}\\p{N}_])`, rule.caseSensitive ? 'gu' : 'giu');
    const longest = words[0]?.length ?? 1;
    return { ...regexDetector({ id, label, pattern, chars: /[\s\S]/, maxSpan: longest }), id, label };
  }
  if (!rule.regex) throw new Error(`guardrail rule ${rule.name}: give regex or words`);
  const flags = `${(rule.flags ?? '').replace(/[gy]/g, '')}g`;
  return regexDetector({ id, label, pattern: new RegExp(rule.regex, flags), chars: /[\s\S]/, maxSpan: rule.maxLength ?? 128 });
}
