/**
 * deploy/prometheus/switchyard-rules.yaml: promtool accepts it, and its unit tests
 * (switchyard-rules.test.yaml: each alert firing, not firing and clearing on input series) pass.
 * test/observability/prometheus.test.ts loads the same file into a running Prometheus.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import YAML from 'yaml';
import { prometheusTool } from './helpers.ts';

const DIR = new URL('../../deploy/prometheus/', import.meta.url).pathname;
const RULES = path.join(DIR, 'switchyard-rules.yaml');
const TESTS = path.join(DIR, 'switchyard-rules.test.yaml');

function promtool(...args: string[]): { status: number | null; output: string } {
  const run = spawnSync(prometheusTool('promtool'), args, { cwd: DIR, encoding: 'utf8' });
  if (run.error) throw run.error;
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

it('promtool check rules accepts the rules file', () => {
  const run = promtool('check', 'rules', RULES);
  expect(run.output).toMatch(/SUCCESS: \d+ rules found/);
  expect(run.status, run.output).toBe(0);
});

it('promtool test rules: every alert has a unit test, and they pass', () => {
  const alerts = YAML.parse(readFileSync(RULES, 'utf8')).groups.flatMap((g: { rules: Array<{ alert?: string }> }) => g.rules.flatMap((r) => (r.alert ? [r.alert] : [])));
  const tested = new Set(
    YAML.parse(readFileSync(TESTS, 'utf8')).tests.flatMap((t: { alert_rule_test?: Array<{ alertname: string; exp_alerts?: unknown[] }> }) =>
      (t.alert_rule_test ?? []).filter((a) => a.exp_alerts?.length).map((a) => a.alertname),
    ),
  );
  expect(alerts.filter((a: string) => !tested.has(a))).toEqual([]);
  const run = promtool('test', 'rules', TESTS);
  expect(run.status, run.output).toBe(0);
  expect(run.output).toMatch(/SUCCESS/);
});
