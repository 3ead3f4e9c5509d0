/**
 * National identity numbers whose format or check digit makes a match meaningful: US Social
 * Security numbers (written with dashes, outside the never-issued ranges), Spanish DNI/NIE (check
 * letter) and Brazilian CPF (two check digits). Ids without either (a bare 9-digit number) would
 * take every order number, so they are left to custom rules.
 */
import { regexDetector, type Detector } from './types.ts';

const ssn = regexDetector({
  id: 'national_id',
  label: 'NATIONAL_ID',
  pattern: /(?<![\w-])(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?![\w-])/g,
  chars: /[\d-]/,
  maxSpan: 11,
});

const DNI_LETTERS = 'TRWAGMYFPDXBNJZSQVHLCKE';

const dni = regexDetector({
  id: 'national_id',
  label: 'NATIONAL_ID',
  pattern: /(?<![\w-])[XYZ]?\d{7,8}-?[A-Z](?![\w-])/g,
  chars: /[\dA-Z-]/,
  maxSpan: 11,
  accept(match) {
    const plain = match.replace('-', '');
    const prefix = 'XYZ'.indexOf(plain[0]);
    const digits = prefix >= 0 ? `${prefix}${plain.slice(1, -1)}` : plain.slice(0, -1);
    if (digits.length !== 8) return false;
    return DNI_LETTERS[Number(digits) % 23] === plain[plain.length - 1];
  },
});

function cpfValid(digits: string): boolean {
  if (/^(\d)\1{10}$/.test(digits)) return false;
  const check = (n: number) => {
    let sum = 0;
    for (let i = 0; i < n; i++) sum += Number(digits[i]) * (n + 1 - i);
    const r = (sum * 10) % 11;
    return (r === 10 ? 0 : r) === Number(digits[n]);
  };
  return check(9) && check(10);
}

const cpf = regexDetector({
  id: 'national_id',
  label: 'NATIONAL_ID',
  pattern: /(?<![\w.-])\d{3}\.\d{3}\.\d{3}-\d{2}(?![\w-]|\.\d)/g,
  chars: /[\d.-]/,
  maxSpan: 14,
  accept: (match) => cpfValid(match.replace(/\D/g, '')),
});

/** The national ids above as one detector. */
export const nationalId: Detector = {
  id: 'national_id',
  label: 'NATIONAL_ID',
  find: (text) => [...ssn.find(text), ...dni.find(text), ...cpf.find(text)].sort((a, b) => a.start - b.start),
  pendingFrom: (text) => Math.min(ssn.pendingFrom(text), dni.pendingFrom(text), cpf.pendingFrom(text)),
};
