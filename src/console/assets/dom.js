// DOM and formatting helpers shared by the console's views: no library, text only (never innerHTML).
export const $ = (id) => document.getElementById(id);
const SVG = 'http://www.w3.org/2000/svg';

/** An element with attributes (`class`, `aria-*`, ...) and children (strings become text). */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined && v !== null && v !== false) el.setAttribute(k, v === true ? '' : String(v));
  for (const c of children.flat()) if (c !== undefined && c !== null) el.append(c instanceof Node ? c : String(c));
  return el;
}

/** replaceChildren without its habit of writing `null` for an absent child. */
export function fill(el, ...children) {
  el.replaceChildren(...children.flat().filter((c) => c !== undefined && c !== null && c !== false));
}

/**
 * Each cell is given its column's name (data-label): on a narrow screen a row becomes a block of
 * labelled lines (console.css), so no column is cut off.
 */
export function labelCells(table) {
  const names = [...table.tHead.rows[0].cells].map((c) => c.textContent);
  for (const row of table.tBodies[0].rows) for (const [i, cell] of [...row.cells].entries()) cell.dataset.label = names[i] ?? '';
}

export const fmt = {
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
export function sparkline(values, label) {
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

export function issueList(items, cls) {
  return h(
    'ul',
    { class: `issues ${cls}` },
    items.map((e) => h('li', {}, e)),
  );
}

export function statusCell(status) {
  return h('td', { class: `num ${status >= 400 || !status ? 'status-bad' : 'status-ok'}` }, status ? String(status) : 'none');
}
