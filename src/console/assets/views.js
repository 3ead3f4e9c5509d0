// The tables: Models, Keys, Teams, Requests (with one request's attempts), Providers, and Config.
import { api } from './api.js';
import { $, fill, fmt, h, issueList, labelCells, statusCell } from './dom.js';
import { onWorkers, renderReloadSummary, showScope, workerIds } from './overview.js';

let selectedRequest;

function targetState(t) {
  const badge = h('span', { class: `badge ${t.state}` }, t.state);
  if (t.state !== 'cooling') return [badge, t.unavailable ? h('div', { class: 'muted' }, t.unavailable) : null];
  const cooling = t.workers.filter((w) => w.state === 'cooling').map((w) => w.id);
  return [badge, h('div', { class: 'muted' }, `${fmt.duration(t.cooling_until - Date.now())} left, until ${fmt.time(t.cooling_until)}${onWorkers(cooling, t.workers.length)}`)];
}

export async function renderTargets() {
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

export async function renderKeys() {
  const { data, scope } = await api('/admin/v1/console/keys');
  showScope(scope);
  const table = $('keys');
  fill(
    table.tBodies[0],
    data.map((k) => h('tr', { 'data-key': k.name }, h('th', { scope: 'row' }, k.name, k.expired ? h('span', { class: 'muted' }, ' (expired)') : null), h('td', {}, k.team ?? '–'), quotaCells(k))),
  );
  labelCells(table);
}

export async function renderTeams() {
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

export async function renderRequests() {
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
        // A cache hit cost nothing: its cell says what it saved instead.
        h('td', { class: 'num' }, r.cache?.result === 'hit' ? `saved ${fmt.usd(r.cache.savedUsd)}` : fmt.usd(r.costUsd)),
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
    r.cache ? h('p', { id: 'request-cache' }, `Cache: ${r.cache.result}${typeof r.cache.savedUsd === 'number' ? ` (saved ${fmt.usd(r.cache.savedUsd)})` : ''}`) : null,
    r.guardrails?.length
      ? h(
          'p',
          { id: 'request-guardrails' },
          `Guardrails: ${r.guardrails
            .map(
              (v) =>
                `${v.rule} ${v.action} on the ${v.site} (${Object.entries(v.found)
                  .map(([kind, n]) => `${kind} ×${n}`)
                  .join(', ')})`,
            )
            .join('; ')}`,
        )
      : null,
    h('div', { class: 'scroll' }, attempts),
  );
}

/** When a provider's credential expires: the time and what is left, or why there is none. */
function expiryCell(identity) {
  if (!identity) return h('span', { class: 'muted' }, '–');
  if (!identity.expiresAt) return h('span', { class: 'muted' }, identity.refreshes || identity.failures ? 'none held' : 'does not expire');
  const at = Date.parse(identity.expiresAt);
  return [fmt.time(at), h('div', { class: at > Date.now() ? 'muted' : 'status-bad' }, at > Date.now() ? `in ${fmt.duration(at - Date.now())}` : 'expired')];
}

/** Each worker's own identity of a provider, under the merged one (only with several workers). */
function perWorker(p) {
  if (p.workers.length < 2) return null;
  return p.workers.map((w) =>
    h(
      'div',
      { class: 'muted worker-identity' },
      `worker ${w.id}: ${w.identity ? `${w.identity.source}, ${w.identity.refreshes} refreshes${w.identity.expiresAt ? `, expires ${fmt.time(Date.parse(w.identity.expiresAt))}` : ''}` : w.state}`,
    ),
  );
}

export async function renderProviders() {
  const { data, scope } = await api('/admin/v1/console/providers');
  showScope(scope);
  $('providers-note').textContent = workerIds(scope)
    ? 'Each worker fetches and refreshes its own credentials: the expiry shown is the soonest any worker holds, refreshes and failures are summed, and each worker is listed below its provider.'
    : '';
  const table = $('providers');
  fill(
    table.tBodies[0],
    data.map((p) =>
      h(
        'tr',
        { 'data-provider': p.name },
        h('td', {}, p.name),
        h('td', {}, p.plugin),
        h('td', { class: 'state' }, h('span', { class: `badge ${p.state === 'ready' ? 'healthy' : 'unavailable'}` }, p.state), p.unavailable ? h('div', { class: 'muted' }, p.unavailable) : null),
        h('td', { class: 'identity' }, p.identity ? p.identity.source : h('span', { class: 'muted' }, 'not reported'), perWorker(p)),
        h('td', {}, expiryCell(p.identity)),
        h('td', { class: 'num' }, p.identity ? `${p.identity.refreshes}${p.identity.failures ? ` (${p.identity.failures} failed)` : ''}` : '–'),
        h('td', { class: 'wrap' }, p.identity?.lastError ?? '–'),
      ),
    ),
  );
  labelCells(table);
}

export async function renderConfig() {
  const c = await api('/admin/v1/console/config');
  showScope(c.scope);
  $('config-file').textContent = `${c.file} (serving generation ${c.generation})`;
  $('config-text').textContent = c.text;
  renderReloadSummary($('reload'), c.last_reload, c.generation);
}

export async function validate() {
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
    fill(out, h('p', { class: 'error' }, err.message));
    throw err;
  }
}
