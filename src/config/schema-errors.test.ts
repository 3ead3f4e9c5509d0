import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import gatewaySchema from '../../schemas/gateway.schema.json' with { type: 'json' };
import { describePattern } from './schema-errors.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

function patternsIn(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) for (const item of node) patternsIn(item, out);
  else if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      if (k === 'pattern' && typeof v === 'string') out.push(v);
      else patternsIn(v, out);
    }
  }
  return out;
}

/** `pattern: '...'` in the built-in plugins' option schemas (TypeScript objects, read as text). */
function pluginPatterns(): string[] {
  const dir = path.join(ROOT, 'plugins');
  return readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && d.name !== 'examples')
    .flatMap((d) => [...readFileSync(path.join(dir, d.name, 'index.ts'), 'utf8').matchAll(/pattern: '([^']+)'/g)].map((m) => m[1].replaceAll('\\\\', '\\')));
}

/** The same in the built-in stages' option schemas (src/stages). */
function stagePatterns(): string[] {
  const dir = path.join(ROOT, 'src', 'stages');
  return readdirSync(dir)
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
    .flatMap((f) => [...readFileSync(path.join(dir, f), 'utf8').matchAll(/pattern: '([^']+)'/g)].map((m) => m[1].replaceAll('\\\\', '\\')));
}

describe('patterns in words', () => {
  it('every pattern of gateway.yaml and of the built-in plugins is described in words, so no message shows a regex', () => {
    const patterns = [...new Set([...patternsIn(gatewaySchema), ...pluginPatterns(), ...stagePatterns()])];
    expect(patterns.length).toBeGreaterThan(8);
    for (const p of patterns) expect(describePattern(p), p).toMatch(/^[a-z]/);
  });

  it('an unknown pattern is not described (the message then says "does not have the expected form")', () => {
    expect(describePattern('^x+$')).toBeUndefined();
  });
});
