/**
 * Phone numbers in international format (`+44 20 7946 0958`, `+1 (415) 555-2671`), and in the
 * national formats of the regions configured. libphonenumber-js (Google's libphonenumber
 * metadata) decides what is a valid number for its country: a hand-written pattern would either
 * miss real numbers or take every long digit run.
 */
import { findNumbers, type CountryCode } from 'libphonenumber-js/max';
import { trailingRun, type Detector, type Finding } from './types.ts';

export interface PhoneOptions {
  /** ISO 3166 regions whose national formats count too (`US`: `(415) 555-2671`). Default: international format only. */
  regions?: readonly string[];
}

export function phoneDetector(options: PhoneOptions = {}): Detector {
  const regions = (options.regions ?? []) as CountryCode[];
  return {
    id: 'phone',
    label: 'PHONE',
    find(text) {
      const out: Finding[] = [];
      const seen = new Set<number>();
      // Without a default region only numbers written with their country code are found.
      for (const region of regions.length ? regions : [undefined]) {
        for (const found of findNumbers(text, { defaultCountry: region, v2: true })) {
          if (seen.has(found.startsAt)) continue;
          if (!region && text[found.startsAt] !== '+' && !text.startsWith('00', found.startsAt)) continue;
          seen.add(found.startsAt);
          out.push({ start: found.startsAt, end: found.endsAt, label: 'PHONE', detector: 'phone' });
        }
      }
      return out.sort((a, b) => a.start - b.start);
    },
    pendingFrom: (text) => trailingRun(text, /[\d +().-]/, 24),
  };
}
