// Switchyard console: plain DOM, no library. It polls the admin API's /admin/v1/console/*
// endpoints (EventSource cannot send an Authorization header, and the key must never be put in
// a URL), renders with textContent only, and keeps the admin key in sessionStorage. This module
// is the shell: sign-in, tabs and polling; the views are in overview.js and views.js.
import { api, Refused, savedKey, useKey } from './api.js';
import { $, fill } from './dom.js';
import { metaLine, renderOverview } from './overview.js';
import { renderConfig, renderKeys, renderProviders, renderRequests, renderTargets, renderTeams, validate } from './views.js';

const POLL_MS = 2000;
const VIEWS = ['overview', 'targets', 'keys', 'teams', 'requests', 'providers', 'config'];

let current = 'overview';
let timer;

const RENDER = { overview: renderOverview, targets: renderTargets, keys: renderKeys, teams: renderTeams, requests: renderRequests, providers: renderProviders, config: renderConfig };

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
  useKey('');
  $('app').hidden = true;
  $('logout').hidden = true;
  $('login').hidden = false;
  $('meta').textContent = '';
  fill($('scope'));
  $('login-error').textContent = message;
  $('admin-key').focus();
}

async function signIn(key) {
  useKey(key);
  try {
    await api('/admin/v1/console/overview');
  } catch (err) {
    return signOut(err instanceof Refused ? `Refused: ${err.message}` : `Cannot reach the gateway: ${err.message}`);
  }
  useKey(key, true);
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
$('validate').addEventListener('click', () => void validate().catch(fail));
for (const v of VIEWS) $(`tab-${v}`).addEventListener('click', () => select(v));
// Arrow keys move between tabs (WAI-ARIA tabs pattern).
document.querySelector('.tabs').addEventListener('keydown', (e) => {
  const i = VIEWS.indexOf(current);
  if (e.key === 'ArrowRight') select(VIEWS[(i + 1) % VIEWS.length], true);
  else if (e.key === 'ArrowLeft') select(VIEWS[(i + VIEWS.length - 1) % VIEWS.length], true);
  else if (e.key === 'Home') select(VIEWS[0], true);
  else if (e.key === 'End') select(VIEWS[VIEWS.length - 1], true);
});

if (savedKey()) void signIn(savedKey());
else $('admin-key').focus();
