/**
 * The README's PromQL, the rules file and the Grafana dashboard, run by a real Prometheus that
 * scrapes a real gateway every second (both on loopback). Traffic comes in phases, each one
 * scraped before the next, because rate() counts only what a series gained between samples.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { DEV_KEY, fakeUpstream, loadFixture, replay, useTestGateway, type RecordedRequest } from 'switchyard-gateway/kit/testing';
import { configYaml, fixturesOf } from '../helpers/repo.ts';
import { parseExposition, scrape } from './helpers.ts';
import { startPrometheus, type PromSample, type PrometheusServer } from './prometheus-server.ts';
import { dashboardQueries, metricNames, recordingRules } from './promql.ts';

const RULES = new URL('../../deploy/prometheus/switchyard-rules.yaml', import.meta.url).pathname;
const DASHBOARD = new URL('../../deploy/grafana/switchyard-dashboard.json', import.meta.url).pathname;
const README = new URL('../../README.md', import.meta.url).pathname;

const CI_KEY = 'sk-ci-0123456789abcdef';
const INTERN_KEY = 'sk-intern-0123456789ab';
// $1,000 per million tokens: a request of 21 tokens costs $0.021, so a $0.2 budget lasts a few requests.
const PRICE = '{ input: 1000, output: 1000 }';
const f = (name: string) => loadFixture(fixturesOf('openai'), name);

/** One upstream, answering by model: `fast` in 20 ms, `slow` in 1.5 s, `broken` with a 500. */
const upstream = fakeUpstream((req: RecordedRequest) => {
  const model = String(req.body?.model);
  if (model === 'broken') return replay(f('error-500-server-error'));
  const fixture = f(req.body?.stream ? 'stream-refusal' : 'chat-basic');
  return replay(fixture, { delayMs: model === 'slow' ? 1_500 : 20 });
});

const t = useTestGateway(
  () =>
    configYaml({
      keys: [
        `  - { name: dev, key: ${DEV_KEY}, models: ["*"], team: core }`,
        `  - { name: ci, key: ${CI_KEY}, models: ["*"], team: batch }`,
        `  - { name: intern, key: ${INTERN_KEY}, models: ["*"], team: interns }`,
      ].join('\n'),
      providers: `  up: { plugin: openai, baseUrl: "${upstream.url}/v1" }`,
      models: [
        `  fast: { retry: { attempts: 1 }, targets: [{ provider: up, model: fast, price: ${PRICE} }] }`,
        `  slow: { retry: { attempts: 1 }, targets: [{ provider: up, model: slow, price: ${PRICE} }] }`,
        `  broken: { retry: { attempts: 1 }, cooldown: { failures: 1, windowMs: 600000, durationMs: 600000 }, targets: [{ provider: up, model: broken, price: ${PRICE} }] }`,
      ].join('\n'),
      extra: 'teams:\n  core: {}\n  batch: {}\n  interns: { budget: { usd: 0.2, period: daily } }',
    }),
  { upstreams: [upstream] },
);

function ask(key: string, model: string, stream = false) {
  return fetch(`${t.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, stream, max_tokens: 16, messages: [{ role: 'user', content: 'hello' }] }),
  }).then(async (res) => ({ status: res.status, body: await res.text() }));
}

/** Sends `n` requests, 5 at a time. */
async function send(n: number, key: string, model: string, stream = false): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < n; i += 5) statuses.push(...(await Promise.all(Array.from({ length: Math.min(5, n - i) }, () => ask(key, model, stream).then((r) => r.status)))));
  return statuses;
}

let prom: PrometheusServer;
/** Requests the gateway answered so far; Prometheus has scraped a phase once its sum says so. */
let sent = 0;

async function scraped(): Promise<void> {
  await prom.waitFor('sum(switchyard_requests_total)', (s) => s[0]?.value === sent, `all ${sent} requests scraped`);
  // rate() needs the next sample too: wait for one more scrape after the one that saw them.
  await new Promise((r) => setTimeout(r, 1_500));
}

/** The README's PromQL block: each query under its comment. */
function readmeQueries(): Map<string, string> {
  const section = readFileSync(README, 'utf8').split('\n## Observability')[1]!.split('\n## ')[0]!;
  const block = /```promql\n([\s\S]*?)```/.exec(section)![1]!;
  const queries = new Map<string, string>();
  let comment = '';
  for (const line of block.split('\n').filter(Boolean)) {
    if (line.startsWith('#')) comment = line.slice(1).trim();
    else queries.set(comment, line);
  }
  return queries;
}

const by = (samples: PromSample[], label: string) => Object.fromEntries(samples.map((s) => [s.metric[label], s.value]));
const queries = readmeQueries();
const readme = (start: string): string => {
  const found = [...queries].find(([comment]) => comment.startsWith(start));
  if (!found) throw new Error(`the README's PromQL has no query under a comment starting "${start}"; it has: ${[...queries.keys()].join(' | ')}`);
  return found[1];
};

beforeAll(async () => {
  prom = await startPrometheus({ target: new URL(t.gateway.metricsUrl!).host, metricsPath: new URL(t.gateway.metricsUrl!).pathname, ruleFiles: [RULES] });
  await prom.waitFor('up{job="switchyard"}', (s) => s[0]?.value === 1, 'the gateway up');
  // Phase 1: every series the later phases grow, first seen at its starting value.
  const first = [await ask(DEV_KEY, 'fast'), await ask(DEV_KEY, 'slow'), await ask(CI_KEY, 'fast', true), await ask(CI_KEY, 'fast')];
  expect(first.map((r) => r.status)).toEqual([200, 200, 200, 200]);
  sent += first.length;
  await scraped();
  // Phase 2: successes only.
  const statuses = [...(await send(20, DEV_KEY, 'fast')), ...(await send(20, DEV_KEY, 'slow')), ...(await send(10, CI_KEY, 'fast', true))];
  expect(new Set(statuses)).toEqual(new Set([200]));
  sent += statuses.length;
  await scraped();
}, 90_000);

afterAll(async () => {
  await prom?.close();
});

describe("the README's PromQL, against a real Prometheus", () => {
  it('reads every query the README shows, under the comment that says what it is', () => {
    expect([...queries.keys()].length).toBeGreaterThanOrEqual(8);
    for (const [comment, query] of queries) expect(query, comment).toMatch(/switchyard_|gen_ai_/);
  });

  it('error ratio reads 0, not nothing, while no request fails', async () => {
    const ratio = await prom.query(readme('error ratio'));
    expect(ratio).toEqual([{ metric: {}, value: 0 }]);
    // Without `or vector(0)` the same question has no answer at all: why the README adds it.
    expect(await prom.query('sum(rate(switchyard_requests_total{status=~"5.."}[5m])) / sum(rate(switchyard_requests_total[5m]))')).toEqual([]);
    expect(await prom.query('switchyard:error_ratio:rate5m')).toEqual([{ metric: { __name__: 'switchyard:error_ratio:rate5m' }, value: 0 }]);
  });

  it('requests per second per key: each key that sent, in proportion', async () => {
    const rates = by(await prom.query(readme('requests per second')), 'key');
    expect(Object.keys(rates).sort()).toEqual(['ci', 'dev']);
    expect(rates.dev).toBeGreaterThan(0);
    // dev sent 40 in phase 2, ci 10. rate() extrapolates each series a little toward the window's
    // start, less for a series that started near zero: the ratio holds within that margin.
    expect(rates.dev / rates.ci).toBeGreaterThan(4 * 0.85);
    expect(rates.dev / rates.ci).toBeLessThan(4 * 1.15);
  });

  it('p95 latency per alias tells a 20 ms model from a 1.5 s one', async () => {
    const p95 = by(await prom.query(readme('p95 latency')), 'gen_ai_request_model');
    expect(Object.keys(p95).sort()).toEqual(['fast', 'slow']);
    // No request is faster than its upstream's delay, so neither p95 can be under it (the buckets
    // around it are 0.015 / 0.02 / 0.03 and 1.5 / 2); the upper bounds leave room for a busy machine.
    expect(p95.fast).toBeGreaterThanOrEqual(0.015);
    expect(p95.slow).toBeGreaterThanOrEqual(1.5);
    expect(p95.slow).toBeLessThan(10);
    expect(p95.fast).toBeLessThan(p95.slow / 2);
  });

  it('p95 time to first token per alias, for the streams', async () => {
    const ttft = by(await prom.query(readme('p95 time to first token')), 'gen_ai_request_model');
    expect(Object.keys(ttft)).toEqual(['fast']);
    expect(ttft.fast).toBeGreaterThanOrEqual(0.015);
    expect(ttft.fast).toBeLessThan(1.5);
  });

  it('spend per team: what each team spent, in proportion to its tokens', async () => {
    const spend = by(await prom.query(readme('spend per team')), 'team');
    expect(Object.keys(spend).sort()).toEqual(['batch', 'core']);
    // chat-basic is 14 + 7 tokens, the stream 17 + 13, at $1,000 per million: core 40 × $0.021, batch 10 × $0.030.
    const expected = (40 * 21) / (10 * 30);
    expect(spend.core / spend.batch).toBeGreaterThan(expected * 0.85);
    expect(spend.core / spend.batch).toBeLessThan(expected * 1.15);
  });

  it('gateway overhead p99 is a duration under a second', async () => {
    const [p99] = await prom.query(readme('gateway overhead'));
    expect(p99!.value).toBeGreaterThan(0);
    expect(p99!.value).toBeLessThan(1);
  });

  describe('then failures, refusals and a spent budget', () => {
    beforeAll(async () => {
      // The 5xx series appear at their first value (the upstream's 502, then 503
      // provider_unavailable once the breaker is open); the second round is what rate() sees.
      expect([...(await send(1, CI_KEY, 'broken')), ...(await send(1, CI_KEY, 'broken'))]).toEqual([502, 503]);
      sent += 2;
      await scraped();
      expect(await send(4, CI_KEY, 'broken')).toEqual([503, 503, 503, 503]);
      sent += 4;
      // The interns' $0.2 a day runs out after a few requests: 429 insufficient_quota.
      let statuses: number[] = [];
      for (let i = 0; i < 30 && !statuses.includes(429); i++) statuses.push((await ask(INTERN_KEY, 'fast')).status);
      expect(statuses.at(-1)).toBe(429);
      sent += statuses.length;
      statuses = [(await ask(INTERN_KEY, 'fast')).status, (await ask('sk-nobody-000000000000', 'fast')).status];
      expect(statuses).toEqual([429, 401]);
      sent += statuses.length;
      await scraped();
    }, 60_000);

    it('error ratio is above 0 and below 1', async () => {
      const [ratio] = await prom.query(readme('error ratio'));
      expect(ratio!.value).toBeGreaterThan(0);
      expect(ratio!.value).toBeLessThan(1);
    });

    it('targets out of rotation: the broken one', async () => {
      const cooling = await prom.query(readme('targets out of rotation'));
      expect(cooling.map((s) => [s.metric.model, s.metric.target, s.value])).toEqual([['broken', 'up/broken', 1]]);
    });

    it('refusals by reason and scope: the team budget and the unknown key', async () => {
      const refusals = await prom.query(readme('refusals per second'));
      expect(refusals.map((s) => `${s.metric.reason}/${s.metric.scope}`).sort()).toEqual(['budget/team', 'invalid_key/key']);
      expect(refusals.every((s) => s.value >= 0)).toBe(true);
      const total = await prom.query('sum by (key, team, reason, scope) (switchyard_refusals_total)');
      expect(total.find((s) => s.metric.key === 'intern')!.metric).toEqual({ key: 'intern', team: 'interns', reason: 'budget', scope: 'team' });
    });

    it('share of each budget spent, and the budget alert firing for real', async () => {
      const [share] = await prom.query(readme('share of each budget'));
      expect(share!.metric).toMatchObject({ scope: 'team', name: 'interns', period: 'daily' });
      // Refused only when the next request's worst case no longer fits: most of the budget is spent.
      expect(share!.value).toBeGreaterThan(0.8);
      const alertname = share!.value >= 1 ? 'SwitchyardBudgetSpent' : 'SwitchyardBudgetNearlySpent';
      const alerts = await prom.waitFor(`ALERTS{alertstate="firing",alertname=~"SwitchyardBudget.*"}`, (s) => s.length > 0, 'a budget alert firing', 15_000);
      expect(alerts.map((a) => [a.metric.alertname, a.metric.name, a.metric.severity])).toEqual([[alertname, 'interns', alertname === 'SwitchyardBudgetSpent' ? 'critical' : 'warning']]);
    });

    it('every rule of the rules file evaluates without error on real series', async () => {
      const data = await prom.api<{ groups: Array<{ name: string; rules: Array<{ name: string; health: string; lastError?: string }> }> }>('/api/v1/rules');
      const rules = data.groups.flatMap((g) => g.rules);
      const file = YAML.parse(readFileSync(RULES, 'utf8'));
      expect(rules.length).toBe(file.groups.flatMap((g: { rules: unknown[] }) => g.rules).length);
      expect(recordingRules(file).length).toBeGreaterThan(0);
      expect(rules.filter((r) => r.health !== 'ok').map((r) => `${r.name}: ${r.health} ${r.lastError ?? ''}`)).toEqual([]);
      // The recording rules have answers for this traffic, not only no errors.
      for (const name of [
        'switchyard:error_ratio:rate5m',
        'model:switchyard_error_ratio:rate5m',
        'team:switchyard_cost_usd:increase1h',
        'switchyard:budget_used:ratio',
        'switchyard:overhead_seconds:p99_5m',
      ])
        expect((await prom.query(name)).length, name).toBeGreaterThan(0);
      expect(by(await prom.query('model:switchyard_error_ratio:rate5m'), 'model')).toMatchObject({ fast: 0, slow: 0 });
    });

    it('every Grafana dashboard query names only metrics the gateway exposes or the rules record, and runs', async () => {
      const exposed = new Set(parseExposition((await scrape(t.gateway.metricsUrl!)).text).map((s) => s.name));
      const recorded = new Set(recordingRules(YAML.parse(readFileSync(RULES, 'utf8'))));
      const panels = dashboardQueries(JSON.parse(readFileSync(DASHBOARD, 'utf8')));
      expect(panels.length).toBeGreaterThanOrEqual(15);
      const unknown: string[] = [];
      for (const { panel, expr } of panels) {
        const names = metricNames(expr);
        expect(names.length, `${panel}: ${expr}`).toBeGreaterThan(0);
        for (const name of names) if (!exposed.has(name) && !recorded.has(name)) unknown.push(`${panel}: ${name}`);
        // Grafana fills $__rate_interval in; Prometheus must accept the rest as it is.
        await prom.query(expr.replaceAll('$__rate_interval', '1m'));
      }
      expect(unknown).toEqual([]);
    });
  });
});
