/** The docs cannot drift from the code: every error code and config field is documented, every code block compiles. */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERROR_CATALOGUE } from '../../src/errors.ts';
import schema from '../../schemas/gateway.schema.json' with { type: 'json' };
import { ROOT } from '../helpers/repo.ts';
import { parseConfigText } from '../../src/config/load.ts';

const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
const reference = readFileSync(path.join(ROOT, 'docs/configuration.md'), 'utf8');

describe('documentation', () => {
  it('the README error table lists every catalogued code with its status and type', () => {
    for (const [code, entry] of Object.entries(ERROR_CATALOGUE)) {
      expect(readme, code).toContain(`| \`${code}\` | ${entry.status} | ${entry.type} | ${entry.summary} |`);
    }
  });

  it('docs/configuration.md documents every gateway.yaml field', () => {
    const props = schema.properties;
    const sections: Record<string, Record<string, unknown>> = {
      server: props.server.properties,
      log: props.log.properties,
      keys: props.keys.items.properties,
      models: props.models.additionalProperties.properties,
      teams: props.teams.additionalProperties.properties,
      state: props.state.properties,
      admin: props.admin.properties,
      metrics: props.metrics.properties,
      tracing: props.tracing.properties,
    };
    for (const [section, fields] of Object.entries(sections)) {
      expect(reference).toContain(`## \`${section}\``);
      for (const field of Object.keys(fields)) expect(reference, `${section}.${field}`).toMatch(new RegExp(`\\| \`${field}(\\.\\w+)?\` \\|`));
    }
    expect(reference).toContain('## `providers`');
    expect(reference).toContain('## `pipeline`');
  });

  // `npm run check:docs` runs scripts/check-docs.mjs over README.md, CONTRIBUTING.md and docs/plugins.md.
  it('the docs check compiles code blocks against the public entries and names the doc line of a failing one', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'check-docs-'));
    const doc = path.join(dir, 'guide.md');
    const fence = '```';
    const lines = [
      '# A guide',
      `${fence}ts`,
      "import { GatewayError } from 'switchyard-gateway/kit';",
      "export const refusal = new GatewayError('invalid_request', 'a block that compiles');",
      fence,
      `${fence}ts file=acme/index.ts`,
      'export const answer = 42;',
      fence,
      `${fence}ts file=acme/acme.test.ts`,
      "import { answer } from './index.ts';",
      'const wrong: string = answer;', // line 11
      fence,
      `${fence}ts fragment`,
      'ctx.whatever = 1;',
      fence,
      `${fence}ts`,
      "import { runConformance } from 'switchyard-gateway/kit/testing';",
      '',
      "runConformance({ name: 'acme', capabilities: {} });", // line 19
      fence,
      `${fence}js`,
      "import { defineStage } from 'switchyard';", // line 22
      fence,
    ];
    writeFileSync(doc, `${lines.join('\n')}\n`);
    try {
      const run = spawnSync(process.execPath, [path.join(ROOT, 'scripts/check-docs.mjs'), doc], { cwd: ROOT, encoding: 'utf8' });
      expect(run.status, run.stdout + run.stderr).toBe(1);
      const problems = run.stderr.split('\n').filter((l) => l.startsWith(doc));
      expect(problems).toEqual([
        expect.stringMatching(new RegExp(`^${doc}:11:7: error TS2322: Type 'number' is not assignable to type 'string'`)),
        expect.stringMatching(new RegExp(`^${doc}:19:32: error TS2353: .*'capabilities' does not exist in type 'ProviderConformance'`)),
        expect.stringMatching(new RegExp(`^${doc}:22:\\d+: error TS2307: Cannot find module 'switchyard'`)),
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it('the key rotation example in docs/configuration.md is a valid keys: section', () => {
    const example = /### Rotating a key[\s\S]*?```yaml\n([\s\S]*?)```/.exec(reference)?.[1];
    expect(example).toContain('previous:');
    const hex = (c: string) => c.repeat(64);
    const yaml = `${example!.replace('<new>', hex('a')).replace('<old>', hex('b'))}providers:\n  mock: { plugin: mock }\nmodels:\n  demo: { targets: [{ provider: mock, model: m }] }\n`;
    const parsed = parseConfigText(yaml, path.join(ROOT, 'gateway.yaml'), {});
    expect(parsed.source.issues).toEqual([]);
    expect(parsed.config?.keys[0].previous).toEqual([{ keyHash: `sha256:${hex('b')}`, until: '2026-12-01T00:00:00Z' }]);
  });
});
