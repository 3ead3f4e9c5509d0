// The overview (cards, last reload, targets cooling, processes) and the line that says which
// processes every view's figures cover.
import { api } from './api.js';
import { $, fill, fmt, h, issueList, labelCells, sparkline } from './dom.js';

/** Worker ids of a scope, or null for a lone process. */
export const workerIds = (scope) => (scope.workers.some((w) => w.id !== null) ? scope.workers.map((w) => w.id) : null);
const workerList = (ids) => (ids.length === 1 ? `worker ${ids[0]}` : `workers ${ids.join(', ')}`);

export function showScope(scope) {
  const ids = workerIds(scope);
  const el = $('scope');
  const missing = scope.missing.map((m) => (m.worker ? `worker ${m.worker}: ${m.reason}` : m.reason));
  el.className = `scope${missing.length ? ' warn' : ''}`;
  if (!ids && !missing.length) return fill(el);
  fill(el, ids ? `Figures cover ${ids.length === 1 ? 'worker' : `all ${ids.length} workers`} (${ids.join(', ')}).` : null, missing.length ? ` Missing: ${missing.join('; ')}.` : null);
}

export function metaLine(o) {
  const generations = [...new Set(o.scope.workers.map((w) => w.generation))];
  const ids = workerIds(o.scope);
  const generation = generations.length <= 1 ? `config generation ${o.generation}` : `config generations ${o.scope.workers.map((w) => `${w.generation} (worker ${w.id})`).join(', ')}`;
  return `v${o.version} · up ${fmt.uptime(o.uptime_s)} · ${generation} · ${o.in_flight} in flight${ids ? ` · ${ids.length} workers` : ''}`;
}

export async function renderOverview() {
  const o = await api('/admin/v1/console/overview');
  const perS = o.bucket_ms / 1000;
  const s = o.series;
  const cards = [
    ['rps', 'Requests/s', fmt.num(o.now.requests_per_s, 2), s.map((b) => b.requests / perS)],
    ['errors', 'Error rate', fmt.pct(o.now.error_rate), s.map((b) => (b.requests ? b.errors / b.requests : null))],
    ['p50', 'Latency p50', fmt.ms(o.now.p50_ms), s.map((b) => b.p50Ms)],
    ['p99', 'Latency p99', fmt.ms(o.now.p99_ms), s.map((b) => b.p99Ms)],
    ['ttft', 'Time to first token p50', fmt.ms(o.now.ttft_p50_ms), s.map((b) => b.ttftP50Ms)],
    ['tokens', 'Tokens/s', fmt.num(o.now.tokens_per_s, 1), s.map((b) => b.tokens / perS)],
    ['spend', 'Spend/hour', fmt.usd(o.now.spend_per_hour_usd), s.map((b) => (b.costUsd * 3600) / perS)],
  ];
  const small = [
    ['inflight', 'In flight', String(o.in_flight)],
    ['total', 'Requests, 15 min', fmt.num(o.last_15m.requests, 0)],
    ['cost', 'Spend, 15 min', fmt.usd(o.last_15m.cost_usd)],
  ];
  fill(
    $('cards'),
    cards.map(([id, label, value, series]) => h('article', { class: 'card', id: `card-${id}` }, h('h3', {}, label), h('p', { class: 'value num', id: `m-${id}` }, value), sparkline(series, label))),
    small.map(([id, label, value]) => h('article', { class: 'card small', id: `card-${id}` }, h('h3', {}, label), h('p', { class: 'value num', id: `m-${id}` }, value))),
  );
  $('meta').textContent = metaLine(o);
  showScope(o.scope);
  renderReloadSummary($('overview-reload'), o.last_reload, o.generation);
  renderCooling(o.cooling);
  renderWorkers(o.scope);
}

/** Where a per-worker fact applies: nothing for a lone process, "on worker 1 of 2" otherwise. */
export function onWorkers(ids, of) {
  if (ids.length === 0 || ids[0] === null) return '';
  if (ids.length < of) return ` on ${workerList(ids)} of ${of}`;
  return of === 1 ? ` on worker ${ids[0]}` : ` on all ${of} workers`;
}

export function renderReloadSummary(box, r, generation) {
  box.className = `reload${r && !r.ok ? ' failed' : ''}`;
  if (!r) return fill(box, h('strong', {}, 'No reload since start.'), ` Serving generation ${generation}.`);
  const when = `${new Date(r.at).toLocaleString()}, ${r.trigger}${onWorkers(r.workers, r.of)}`;
  if (r.ok) return fill(box, h('strong', { class: 'status-ok' }, `Accepted: generation ${r.generation}`), h('p', { class: 'muted' }, when), h('p', {}, r.message));
  fill(
    box,
    h('strong', { class: 'status-bad' }, `Rejected: still serving generation ${r.generation}`),
    h('p', { class: 'muted' }, when),
    issueList(r.errors?.length ? r.errors : [r.message], 'errors'),
  );
}

function renderCooling(cooling) {
  const box = $('overview-cooling');
  if (!cooling.length) return fill(box, h('p', { class: 'muted', id: 'no-cooling' }, 'No target is cooling.'));
  fill(
    box,
    h(
      'ul',
      { class: 'cooling', id: 'cooling-list' },
      cooling.map((c) =>
        h(
          'li',
          { 'data-target': `${c.alias}/${c.provider}/${c.model}` },
          h('span', { class: 'badge cooling' }, 'cooling'),
          ` ${c.alias} → ${c.provider}/${c.model}: ${fmt.duration(c.left_ms)} left (until ${fmt.time(c.until)})${onWorkers(c.workers, c.of)}`,
        ),
      ),
    ),
  );
}

function renderWorkers(scope) {
  const table = h(
    'table',
    { id: 'workers' },
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        ['Process', 'PID', 'Up', 'Generation', 'In flight', 'Requests, 15 min'].map((c) => h('th', { scope: 'col' }, c)),
      ),
    ),
    h(
      'tbody',
      {},
      scope.workers.map((w) =>
        h(
          'tr',
          { 'data-worker': w.id ?? 'single' },
          h('td', {}, w.id === null ? 'this process' : `worker ${w.id}`),
          h('td', { class: 'num' }, String(w.pid)),
          h('td', {}, fmt.uptime(w.uptime_s)),
          h('td', { class: 'num' }, String(w.generation)),
          h('td', { class: 'num' }, String(w.in_flight)),
          h('td', { class: 'num' }, fmt.num(w.requests_15m, 0)),
        ),
      ),
      scope.missing.map((m) => h('tr', { class: 'missing' }, h('td', { colspan: 6 }, m.worker ? `worker ${m.worker}: ${m.reason}` : m.reason))),
    ),
  );
  labelCells(table);
  fill($('overview-workers'), h('div', { class: 'scroll' }, table));
}
