// Switchyard console: plain DOM, no library. It polls the admin API's /admin/v1/console/*
// endpoints (EventSource cannot send an Authorization header, and the key must never be put in
// a URL), renders with textContent only, and keeps the admin key in sessionStorage.
const KEY_STORE = 'switchyard.console.adminKey';
const POLL_MS = 2000;
const VIEWS = ['overview', 'targets', 'keys', 'teams', 'requests', 'config'];
const $ = (id) => document.getElementById(id);
const SVG = 'http://www.w3.org/2000/svg';

let adminKey = sessionStorage.getItem(KEY_STORE) ?? '';
let current = 'overview';
let timer;
let selectedRequest;

/** An element with attributes (`class`, `aria-*`, ...) and children (strings become text). */
function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined && v !== null && v !== false) el.setAttribute(k, v === true ? '' : String(v));
  for (const c of children.flat()) if (c !== undefined && c !== null) el.append(c instanceof Node ? c : String(c));
  return el;
}

/** replaceChildren without its habit of writing `null` for an absent child. */
function fill(el, ...children) {
  el.replaceChildren(...children.flat().filter((c) => c !== undefined && c !== null && c !== false));
}

/**
 * Each cell is given its column's name (data-label): on a narrow screen a row becomes a block of
 * labelled lines (console.css), so no column is cut off.
 */
function labelCells(table) {
  const names = [...table.tHead.rows[0].cells].map((c) => c.textContent);
  for (const row of table.tBodies[0].rows) for (const [i, cell] of [...row.cells].entries()) cell.dataset.label = names[i] ?? '';
}

class Refused extends Error {}

async function api(path, init = {}) {
  const response = await fetch(path, { ...init, cache: 'no-store', headers: { ...init.headers, authorization: `Bearer ${adminKey}` } });
  const body = await response.json().catch(() => ({}));
  if (response.status === 401) throw new Refused(body?.error?.message ?? 'The admin key was refused.');
  if (!response.ok) throw new Error(body?.error?.message ?? `HTTP ${response.status}`);
  return body;
}

// ---- formatting ----
const fmt = {
  num: (n, digits = 1) => (n === null || n === undefined ? '–' : Number(n).toLocaleString(undefined, { maximumFractionDigits: digits })),
  ms: (n) => (n === null || n === undefined ? '–' : n >= 10_000 ? `${(n / 1000).toFixed(1)} s` : `${Math.round(n)} ms`),
  pct: (n) => (n === null || n === undefined ? '–' : `${(n * 100).toFixed(n < 0.1 ? 1 : 0)}%`),
  usd: (n) => (n === null || n === undefined ? '–' : `$${n < 1 ? n.toFixed(4) : n.toFixed(2)}`),
  duration: (ms) => {
    const s = Math.max(0, Math.round(ms / 1000));
    if (s < 60) return `${s} s`;
    if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
    return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  },
  time: (ms) => (ms ? new Date(ms).toLocaleTimeString() : '–'),
  ago: (ms) => {
    if (!ms) return 'never';
    const s = Math.max(0, Math.round((Date.now() - ms) / 1000));
    return s < 60 ? `${s} s ago` : s < 3600 ? `${Math.round(s / 60)} min ago` : new Date(ms).toLocaleString();
  },
  uptime: (s) =>
    s < 3600 ? `${Math.floor(s / 60)} min` : s < 86400 ? `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min` : `${Math.floor(s / 86400)} d ${Math.floor((s % 86400) / 3600)} h`,
};

/** A tiny line chart of one series (null = no data), drawn to fit its box. */
function sparkline(values, label) {
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('viewBox', '0 0 100 40');
  svg.setAttribute('preserveAspectRatio', 'none');
  svg.setAttribute('role', 'img');
  svg.setAttribute('aria-label', `${label}, last 15 minutes`);
  const max = Math.max(...values.map((v) => v ?? 0), 0) || 1;
  const step = 100 / Math.max(1, values.length - 1);
  const base = document.createElementNS(SVG, 'line');
  for (const [k, v] of Object.entries({ x1: 0, y1: 39, x2: 100, y2: 39 })) base.setAttribute(k, v);
  svg.append(base);
  const line = document.createElementNS(SVG, 'polyline');
  line.setAttribute('points', values.map((v, i) => `${(i * step).toFixed(2)},${(38 - ((v ?? 0) / max) * 36).toFixed(2)}`).join(' '));
  svg.append(line);
  return svg;
}

// ---- scope: which processes the figures cover ----
/** Worker ids of a scope, or null for a lone process. */
const workerIds = (scope) => (scope.workers.some((w) => w.id !== null) ? scope.workers.map((w) => w.id) : null);
const workerList = (ids) => (ids.length === 1 ? `worker ${ids[0]}` : `workers ${ids.join(', ')}`);

function showScope(scope) {
  const ids = workerIds(scope);
  const el = $('scope');
  const missing = scope.missing.map((m) => (m.worker ? `worker ${m.worker}: ${m.reason}` : m.reason));
  el.className = `scope${missing.length ? ' warn' : ''}`;
  if (!ids && !missing.length) return fill(el);
  fill(el, ids ? `Figures cover ${ids.length === 1 ? 'worker' : `all ${ids.length} workers`} (${ids.join(', ')}).` : null, missing.length ? ` Missing: ${missing.join('; ')}.` : null);
}

function metaLine(o) {
  const generations = [...new Set(o.scope.workers.map((w) => w.generation))];
  const ids = workerIds(o.scope);
  const generation = generations.length <= 1 ? `config generation ${o.generation}` : `config generations ${o.scope.workers.map((w) => `${w.generation} (worker ${w.id})`).join(', ')}`;
  return `v${o.version} · up ${fmt.uptime(o.uptime_s)} · ${generation} · ${o.in_flight} in flight${ids ? ` · ${ids.length} workers` : ''}`;
}

// ---- views ----
async function renderOverview() {
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
function onWorkers(ids, of) {
  if (ids.length === 0 || ids[0] === null) return '';
  if (ids.length < of) return ` on ${workerList(ids)} of ${of}`;
  return of === 1 ? ` on worker ${ids[0]}` : ` on all ${of} workers`;
}

function renderReloadSummary(box, r, generation) {
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

function targetState(t) {
  const badge = h('span', { class: `badge ${t.state}` }, t.state);
  if (t.state !== 'cooling') return [badge, t.unavailable ? h('div', { class: 'muted' }, t.unavailable) : null];
  const cooling = t.workers.filter((w) => w.state === 'cooling').map((w) => w.id);
  return [badge, h('div', { class: 'muted' }, `${fmt.duration(t.cooling_until - Date.now())} left, until ${fmt.time(t.cooling_until)}${onWorkers(cooling, t.workers.length)}`)];
}

async function renderTargets() {
  const { data, scope } = await api('/admin/v1/console/targets');
  showScope(scope);
  fill(
    $('targets'),
    data.map((alias) => {
      const table = h(
        'table',
        { 'data-alias': alias.alias },
        h('caption', {}, `${alias.alias} `, h('span', { class: 'muted' }, `(${alias.strategy})`)),
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            ['Target', 'State', 'In flight', 'Latency avg', 'Errors, 15 min', 'Last error'].map((c) => h('th', { scope: 'col' }, c)),
          ),
        ),
        h(
          'tbody',
          {},
          alias.targets.map((t) =>
            h(
              'tr',
              { 'data-target': `${t.provider}/${t.model}` },
              h('td', {}, `${t.provider}/${t.model}`),
              h('td', { class: 'state' }, targetState(t)),
              h('td', { class: 'num' }, String(t.in_flight)),
              h('td', { class: 'num' }, fmt.ms(t.latency_ms)),
              h('td', { class: 'num' }, String(t.errors)),
              h('td', { class: 'wrap' }, t.lastError ? `${fmt.time(t.lastError.at)} · ${t.lastError.status || 'no status'} · ${t.lastError.message}` : '–'),
            ),
          ),
        ),
      );
      labelCells(table);
      return h('div', { class: 'scroll' }, table);
    }),
  );
}

/** A limit with what is used of it: a bar over the figures. */
function bar(q, used, label) {
  if (!q) return h('span', { class: 'muted' }, '–');
  return h('span', { class: 'use' }, h('meter', { min: 0, max: q.limit, value: used, 'aria-label': label }), h('span', {}, `${fmt.num(used, 0)} / ${fmt.num(q.limit, 0)}`));
}

/** The cells a key and a team share: limits with their use, budget, spend, last request. */
function quotaCells(q) {
  return [
    h('td', {}, bar(q.requests, q.requests ? q.requests.limit - q.requests.remaining : 0, `${q.name} requests per minute`)),
    h('td', {}, bar(q.tokens, q.tokens ? q.tokens.limit - q.tokens.remaining : 0, `${q.name} tokens per minute`)),
    h('td', {}, bar(q.concurrency, q.concurrency?.in_flight ?? 0, `${q.name} concurrency`)),
    h(
      'td',
      {},
      q.budget
        ? h(
            'span',
            { class: 'use' },
            h('meter', { min: 0, max: q.budget.usd, value: q.budget.spent_usd, high: q.budget.usd * 0.8, 'aria-label': `${q.name} budget` }),
            h('span', {}, `${fmt.usd(q.budget.spent_usd)} of ${fmt.usd(q.budget.usd)} ${q.budget.period}`),
          )
        : h('span', { class: 'muted' }, 'none'),
    ),
    h(
      'td',
      { class: 'num spent' },
      q.spent_usd === null
        ? h('span', { class: 'muted', title: 'Neither limits nor a budget: the gateway keeps no counter (see /admin/v1/costs)' }, 'not counted')
        : `${fmt.usd(q.spent_usd)}${q.spent_period && q.spent_period !== 'total' ? ` ${q.spent_period}` : ''}`,
    ),
    h('td', {}, fmt.ago(q.last_request_at)),
  ];
}

async function renderKeys() {
  const { data, scope } = await api('/admin/v1/console/keys');
  showScope(scope);
  const table = $('keys');
  fill(
    table.tBodies[0],
    data.map((k) => h('tr', { 'data-key': k.name }, h('th', { scope: 'row' }, k.name, k.expired ? h('span', { class: 'muted' }, ' (expired)') : null), h('td', {}, k.team ?? '–'), quotaCells(k))),
  );
  labelCells(table);
}

async function renderTeams() {
  const { data, scope } = await api('/admin/v1/console/teams');
  showScope(scope);
  const table = $('teams');
  fill(
    table.tBodies[0],
    data.length === 0
      ? h('tr', {}, h('td', { colspan: 8, class: 'muted' }, 'No teams in gateway.yaml (teams:).'))
      : data.map((t) => h('tr', { 'data-team': t.name }, h('th', { scope: 'row' }, t.name), h('td', { class: 'wrap-list' }, t.keys.length ? t.keys.join(', ') : '–'), quotaCells(t))),
  );
  labelCells(table);
}

function statusCell(status) {
  return h('td', { class: `num ${status >= 400 || !status ? 'status-bad' : 'status-ok'}` }, status ? String(status) : 'none');
}

async function renderRequests() {
  const { data, scope } = await api('/admin/v1/console/requests?limit=50');
  showScope(scope);
  const table = $('requests');
  if (workerIds(scope)) table.dataset.cluster = '';
  else delete table.dataset.cluster;
  fill(
    table.tBodies[0],
    data.map((r) => {
      const row = h(
        'tr',
        { class: 'clickable', tabindex: 0, 'data-request': r.id, 'aria-selected': String(r.id === selectedRequest) },
        h('td', {}, fmt.time(r.at)),
        h('td', { class: 'col-worker num' }, r.worker === undefined ? '–' : String(r.worker)),
        h('td', {}, r.key ?? '–'),
        h('td', {}, r.alias ?? '–'),
        h('td', {}, r.target ?? '–'),
        statusCell(r.status),
        h('td', { class: 'num' }, fmt.ms(r.durationMs)),
        h('td', { class: 'num' }, fmt.ms(r.ttftMs)),
        h('td', { class: 'num' }, r.tokens ? `${r.tokens.prompt}+${r.tokens.completion}` : '–'),
        h('td', { class: 'num' }, fmt.usd(r.costUsd)),
        h('td', { class: 'num' }, String(r.attempts.length)),
      );
      const open = () => void showRequest(r.id);
      row.addEventListener('click', open);
      row.addEventListener('keydown', (e) => {
        if (e.key === 'Enter' || e.key === ' ') {
          e.preventDefault();
          open();
        }
      });
      return row;
    }),
  );
  labelCells(table);
}

async function showRequest(id) {
  selectedRequest = id;
  for (const row of $('requests').tBodies[0].rows) row.setAttribute('aria-selected', String(row.dataset.request === id));
  const r = await api(`/admin/v1/console/requests/${encodeURIComponent(id)}`);
  const detail = $('request-detail');
  detail.hidden = false;
  const attempts = h(
    'table',
    { id: 'attempts' },
    h('caption', {}, 'Attempts'),
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        ['#', 'Target', 'Outcome', 'Status', 'Duration', 'Error'].map((c) => h('th', { scope: 'col' }, c)),
      ),
    ),
    h(
      'tbody',
      {},
      r.attempts.map((a, i) =>
        h(
          'tr',
          {},
          h('td', {}, String(i + 1)),
          h('td', {}, `${a.provider}/${a.model}`),
          h('td', {}, a.outcome),
          statusCell(a.status),
          h('td', { class: 'num' }, fmt.ms(a.durationMs)),
          h('td', { class: 'wrap' }, a.error ?? '–'),
        ),
      ),
    ),
  );
  labelCells(attempts);
  const where = [r.worker === undefined ? null : `worker ${r.worker}`, `key ${r.key ?? '–'}${r.team ? ` (team ${r.team})` : ''}`, r.alias ?? '–', `status ${r.status}`, fmt.ms(r.durationMs)];
  fill(
    detail,
    h('h2', {}, `Request ${r.id}`),
    h('p', {}, `${new Date(r.at).toLocaleString()} · ${where.filter((w) => w !== null).join(' · ')}`),
    r.error ? h('p', { class: 'error' }, `${r.error.code}: ${r.error.message}`) : null,
    h('div', { class: 'scroll' }, attempts),
  );
}

function issueList(items, cls) {
  return h(
    'ul',
    { class: `issues ${cls}` },
    items.map((e) => h('li', {}, e)),
  );
}

async function renderConfig() {
  const c = await api('/admin/v1/console/config');
  showScope(c.scope);
  $('config-file').textContent = `${c.file} (serving generation ${c.generation})`;
  $('config-text').textContent = c.text;
  renderReloadSummary($('reload'), c.last_reload, c.generation);
}

async function validate() {
  const out = $('validate-result');
  fill(out, h('p', { class: 'muted' }, 'Validating…'));
  try {
    const r = await api('/admin/v1/console/validate', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: $('validate-text').value });
    fill(
      out,
      r.ok
        ? h('p', { class: 'status-ok', id: 'validate-ok' }, `OK: ${r.summary}. Nothing was applied.`)
        : h('p', { class: 'status-bad' }, `${r.errors.length} error${r.errors.length === 1 ? '' : 's'}: a reload with this file would be rejected.`),
      r.errors.length ? issueList(r.errors, 'errors') : null,
      r.warnings.length ? h('div', {}, h('p', {}, 'Warnings:'), issueList(r.warnings, 'warnings')) : null,
    );
  } catch (err) {
    fail(err);
    fill(out, h('p', { class: 'error' }, err.message));
  }
}

const RENDER = { overview: renderOverview, targets: renderTargets, keys: renderKeys, teams: renderTeams, requests: renderRequests, config: renderConfig };

// ---- shell: login, tabs, polling ----
function fail(err) {
  if (err instanceof Refused) return signOut(err.message);
  $('status').textContent = `Could not refresh: ${err.message}`;
}

async function refresh() {
  clearTimeout(timer);
  try {
    await RENDER[current]();
    if (current !== 'overview') await renderOverviewMeta();
    $('status').textContent = '';
  } catch (err) {
    fail(err);
    if (err instanceof Refused) return;
  }
  // The config view is not polled: it would overwrite what the operator is reading.
  if (current !== 'config') timer = setTimeout(refresh, POLL_MS);
}

async function renderOverviewMeta() {
  $('meta').textContent = metaLine(await api('/admin/v1/console/overview'));
}

function select(view, focus = false) {
  current = view;
  for (const v of VIEWS) {
    const tab = $(`tab-${v}`);
    tab.setAttribute('aria-selected', String(v === view));
    tab.tabIndex = v === view ? 0 : -1;
    $(`view-${v}`).hidden = v !== view;
  }
  if (focus) $(`tab-${view}`).focus();
  void refresh();
}

function signOut(message = '') {
  clearTimeout(timer);
  adminKey = '';
  sessionStorage.removeItem(KEY_STORE);
  $('app').hidden = true;
  $('logout').hidden = true;
  $('login').hidden = false;
  $('meta').textContent = '';
  fill($('scope'));
  $('login-error').textContent = message;
  $('admin-key').focus();
}

async function signIn(key) {
  adminKey = key;
  try {
    await api('/admin/v1/console/overview');
  } catch (err) {
    return signOut(err instanceof Refused ? `Refused: ${err.message}` : `Cannot reach the gateway: ${err.message}`);
  }
  sessionStorage.setItem(KEY_STORE, key);
  $('login').hidden = true;
  $('login-error').textContent = '';
  $('app').hidden = false;
  $('logout').hidden = false;
  select(current);
}

$('login-form').addEventListener('submit', (e) => {
  e.preventDefault();
  const input = $('admin-key');
  const key = input.value.trim();
  input.value = '';
  if (key) void signIn(key);
});
$('logout').addEventListener('click', () => signOut());
$('validate').addEventListener('click', () => void validate());
for (const v of VIEWS) $(`tab-${v}`).addEventListener('click', () => select(v));
// Arrow keys move between tabs (WAI-ARIA tabs pattern).
document.querySelector('.tabs').addEventListener('keydown', (e) => {
  const i = VIEWS.indexOf(current);
  if (e.key === 'ArrowRight') select(VIEWS[(i + 1) % VIEWS.length], true);
  else if (e.key === 'ArrowLeft') select(VIEWS[(i + VIEWS.length - 1) % VIEWS.length], true);
  else if (e.key === 'Home') select(VIEWS[0], true);
  else if (e.key === 'End') select(VIEWS[VIEWS.length - 1], true);
});

if (adminKey) void signIn(adminKey);
else $('admin-key').focus();
