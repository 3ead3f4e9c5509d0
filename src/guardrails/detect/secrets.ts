/**
 * Credentials by their published formats: the common providers' API keys and tokens (prefixes
 * their issuers document so that scanners can find them), private key blocks and JWTs.
 */
import { regexDetector, trailingRun, type Detector, type Finding } from './types.ts';

const TOKEN_CHARS = /[\w-]/;

/** Provider token formats, most specific first (an Anthropic key also starts with `sk-`). */
const FORMATS: readonly [name: string, pattern: string][] = [
  ['anthropic', 'sk-ant-(?:api|admin|oat)\\d{2}-[A-Za-z0-9_-]{32,}'],
  ['openai', 'sk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{32,}'],
  ['aws_access_key', '(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}'],
  ['github', '(?:gh[pousr]_[A-Za-z0-9]{36,251}|github_pat_[A-Za-z0-9_]{22,242})'],
  ['gitlab', 'glpat-[A-Za-z0-9_-]{20,}'],
  ['slack', 'xox[abposr]-[A-Za-z0-9-]{10,}'],
  ['google_api_key', 'AIza[0-9A-Za-z_-]{35}'],
  ['stripe', '(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}'],
  ['huggingface', 'hf_[A-Za-z]{34}'],
  ['npm', 'npm_[A-Za-z0-9]{36}'],
  ['sendgrid', 'SG\\.[A-Za-z0-9_-]{22}\\.[A-Za-z0-9_-]{43}'],
];

const providerKeys = regexDetector({
  id: 'api_key',
  label: 'API_KEY',
  pattern: new RegExp(`(?<![\\w-])(?:${FORMATS.map(([, p]) => p).join('|')})(?![\\w-])`, 'g'),
  chars: TOKEN_CHARS,
  maxSpan: 260,
});

/** `Bearer <token>` and `api_key = "<token>"`-style assignments, whatever the token's format. */
const assigned = regexDetector({
  id: 'api_key',
  label: 'API_KEY',
  pattern: /(?<=\b(?:[Bb]earer |(?:api[_-]?key|secret|token|password|passwd|access[_-]?key)["']?\s*[:=]\s*["']?))[A-Za-z0-9+/_.=-]{16,}/gi,
  chars: /[A-Za-z0-9+/_.=-]/,
  maxSpan: 512,
  // A placeholder (`YOUR_API_KEY`, `xxxxxxxx...`) is not a secret.
  accept: (match) => /\d/.test(match) && /[A-Za-z]/.test(match) && !/^(?:your|my|example|xxx)/i.test(match),
});

export const apiKey: Detector = {
  id: 'api_key',
  label: 'API_KEY',
  find: (text) => [...providerKeys.find(text), ...assigned.find(text)].sort((a, b) => a.start - b.start),
  pendingFrom: (text) => Math.min(providerKeys.pendingFrom(text), assigned.pendingFrom(text)),
};

const BEGIN = /-----BEGIN ((?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?)-----/g;

/** PEM and PGP private key blocks, BEGIN to END; a block whose END has not arrived yet is held whole. */
export const privateKey: Detector = {
  id: 'private_key',
  label: 'PRIVATE_KEY',
  find(text) {
    const out: Finding[] = [];
    BEGIN.lastIndex = 0;
    for (let m = BEGIN.exec(text); m; m = BEGIN.exec(text)) {
      const endMarker = `-----END ${m[1]}-----`;
      const end = text.indexOf(endMarker, m.index + m[0].length);
      // An unterminated block is a key all the same: everything from BEGIN on.
      const stop = end < 0 ? text.length : end + endMarker.length;
      out.push({ start: m.index, end: stop, label: 'PRIVATE_KEY', detector: 'private_key' });
      BEGIN.lastIndex = stop;
    }
    return out;
  },
  pendingFrom(text) {
    // An open block (BEGIN without its END yet) is undecided from its BEGIN on.
    const open = text.lastIndexOf('-----BEGIN ');
    if (open >= 0 && !text.includes('-----END ', open)) return open;
    // A trailing part of the BEGIN marker.
    return trailingRun(text, /[-A-Z ]/, 48);
  },
};

export const jwt = regexDetector({
  id: 'jwt',
  label: 'JWT',
  pattern: /(?<![\w-])eyJ[A-Za-z0-9_-]{6,}\.eyJ[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]*(?![\w-])/g,
  chars: /[\w.-]/,
  maxSpan: 8192,
});
