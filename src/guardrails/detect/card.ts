/**
 * Payment card numbers: 13–19 digits, grouped by single spaces or dashes or not at all, a known
 * issuer prefix and a valid Luhn check; never a run inside a longer run of digits (order ids,
 * timestamps, decimals).
 */
import { regexDetector } from './types.ts';

/** Luhn (mod 10) over a string of digits. */
export function luhnValid(digits: string): boolean {
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return sum % 10 === 0;
}

/** Issuer prefixes (IIN ranges) of the networks in use, with the lengths each issues. */
function knownIssuer(digits: string): boolean {
  const n = digits.length;
  const p2 = Number(digits.slice(0, 2));
  const p3 = Number(digits.slice(0, 3));
  const p4 = Number(digits.slice(0, 4));
  const p6 = Number(digits.slice(0, 6));
  if (digits[0] === '4') return n === 13 || n === 16 || n === 19; // Visa
  if ((p2 >= 51 && p2 <= 55) || (p4 >= 2221 && p4 <= 2720)) return n === 16; // Mastercard
  if (p2 === 34 || p2 === 37) return n === 15; // American Express
  if (p4 === 6011 || p2 === 65 || (p3 >= 644 && p3 <= 649) || (p6 >= 622126 && p6 <= 622925)) return n >= 16; // Discover
  if (p4 >= 3528 && p4 <= 3589) return n >= 16; // JCB
  if ((p3 >= 300 && p3 <= 305) || p2 === 36 || p2 === 38 || p2 === 39) return n >= 14; // Diners Club
  if (p2 === 62) return n >= 16; // UnionPay
  if (p2 === 50 || (p2 >= 56 && p2 <= 69)) return n >= 12; // Maestro
  return false;
}

export const card = regexDetector({
  id: 'card',
  label: 'CARD',
  // Not preceded or followed by another digit (with or without a separator) or a decimal point.
  pattern: /(?<![\d.,]|\d[ -])\d(?:[ -]?\d){11,18}(?![ -]?\d)/g,
  chars: /[\d -]/,
  maxSpan: 23,
  accept(match) {
    const separators = new Set(match.replace(/\d/g, ''));
    if (separators.size > 1) return false;
    const digits = match.replace(/\D/g, '');
    return digits.length >= 13 && digits.length <= 19 && knownIssuer(digits) && luhnValid(digits) && !/^(\d)\1+$/.test(digits);
  },
});
