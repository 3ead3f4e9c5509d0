/** Email addresses: a local part, a domain with a real-looking top-level label (not `icon@2x.png`, not `@media`). */
import { regexDetector } from './types.ts';

/** File extensions that look like top-level domains after an `@` in code and asset names. */
const NOT_TLDS = new Set([
  'png',
  'jpg',
  'jpeg',
  'gif',
  'svg',
  'webp',
  'ico',
  'css',
  'js',
  'mjs',
  'cjs',
  'ts',
  'tsx',
  'jsx',
  'json',
  'map',
  'html',
  'md',
  'txt',
  'yaml',
  'yml',
  'lock',
  'toml',
  'py',
  'rb',
  'go',
  'rs',
  'java',
  'kt',
  'swift',
  'scss',
  'less',
  'woff',
  'woff2',
  'ttf',
  'mp4',
  'mp3',
  'pdf',
  'zip',
  'gz',
  'tgz',
]);

export const email = regexDetector({
  id: 'email',
  label: 'EMAIL',
  pattern: /(?<![\w.%+-])[A-Za-z0-9](?:[A-Za-z0-9._%+-]{0,62}[A-Za-z0-9_%+-])?@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,24}(?![\w-]|\.[A-Za-z0-9])/g,
  chars: /[\w.%+@-]/,
  maxSpan: 254,
  accept(match) {
    const domain = match.slice(match.indexOf('@') + 1).toLowerCase();
    const tld = domain.slice(domain.lastIndexOf('.') + 1);
    // `name@2x.png`, `lib@1.2.3` style: a version or scale, not a mailbox.
    return !NOT_TLDS.has(tld) && !/^\d/.test(domain) && !match.includes('..');
  },
});
