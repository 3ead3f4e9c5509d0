/**
 * IBANs, printed (`DE89 3704 0044 0532 0130 00`) or electronic (`DE89370400440532013000`): the
 * country's length and BBAN format and the mod-97 check, from ibantools' registry of country
 * specifications (kept up to date with SWIFT's IBAN registry, which we should not copy by hand).
 */
import { getCountrySpecifications, isValidIBAN } from 'ibantools';
import { trailingRun, type Detector, type Finding } from './types.ts';

const SPECS = getCountrySpecifications();
const START = /(?<![A-Za-z0-9])([A-Z]{2})(\d{2})(?=[ ]?[A-Z0-9])/g;

export const iban: Detector = {
  id: 'iban',
  label: 'IBAN',
  find(text) {
    const out: Finding[] = [];
    START.lastIndex = 0;
    for (let m = START.exec(text); m; m = START.exec(text)) {
      const length = SPECS[m[1]]?.chars;
      if (!length) continue;
      // Take the country's number of characters, allowing single spaces between them.
      let electronic = m[1] + m[2];
      let i = m.index + 4;
      while (electronic.length < length && i < text.length) {
        const c = text[i];
        if (c === ' ' && text[i - 1] !== ' ' && /[A-Z0-9]/.test(text[i + 1] ?? '')) i++;
        else if (/[A-Z0-9]/.test(c)) {
          electronic += c;
          i++;
        } else break;
      }
      if (electronic.length !== length || /[A-Za-z0-9]/.test(text[i] ?? '')) continue;
      if (!isValidIBAN(electronic)) continue;
      out.push({ start: m.index, end: i, label: 'IBAN', detector: 'iban' });
      START.lastIndex = i;
    }
    return out;
  },
  pendingFrom: (text) => trailingRun(text, /[A-Z0-9 ]/, 42),
};
