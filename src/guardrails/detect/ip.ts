/** IP addresses: dotted IPv4 with octets up to 255 (not a version `1.2.3.4.5`), IPv6 as node:net reads it (not a time `12:30:45`). */
import { isIPv6 } from 'node:net';
import { regexDetector } from './types.ts';

export const ipv4 = regexDetector({
  id: 'ip',
  label: 'IP',
  pattern: /(?<![\w.])(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?!\.?\d|\w)/g,
  chars: /[\d.]/,
  maxSpan: 15,
});

export const ipv6 = regexDetector({
  id: 'ip',
  label: 'IP',
  pattern: /(?<![\w:])(?:[0-9A-Fa-f]{0,4}:){2,7}(?:[0-9A-Fa-f]{1,4}|(?:\d{1,3}\.){3}\d{1,3})?(?![\w:]|\.\d)/g,
  chars: /[0-9A-Fa-f:.]/,
  maxSpan: 45,
  // What node reads as IPv6 (`::` and `12:30:45` are not), and more than a `Ab::Cd` path of code.
  accept: (match) => isIPv6(match) && ((match.match(/:/g)?.length ?? 0) >= 3 || /[0-9A-Fa-f]{3}/.test(match)),
});
