/** The docs cannot drift from the code: every error code and config field is documented. */
import { readFileSync } from 'node:fs';
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
