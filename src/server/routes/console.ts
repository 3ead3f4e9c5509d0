/**
 * The operator's console: a static page at GET /console (same port) and the small JSON
 * endpoints it polls, all under the admin API's authorisation (`Authorization: Bearer <admin
 * key>`; see README "Console"):
 *
 *   GET  /admin/v1/console/overview       rates over the last minute, 10 s buckets over 15 min, in-flight, uptime, version, generation,
 *                                         the workers covered, targets cooling, the last reload's outcome
 *   GET  /admin/v1/console/targets        per alias its targets: state (healthy, cooling until, probing) on each worker, in-flight, latency, recent errors
 *   GET  /admin/v1/console/keys           each key's limits, use now, budget and spend, last request; biggest spender first
 *   GET  /admin/v1/console/teams          each team's limits, use now, budget and spend, keys; biggest spender first
 *   GET  /admin/v1/console/requests       the most recent requests (?limit=, default 50), newest first
 *   GET  /admin/v1/console/requests/:id   one request with its attempt log
 *   GET  /admin/v1/console/config         gateway.yaml with secrets masked, and the last reload's outcome
 *   GET  /admin/v1/console/providers      each provider's state and identity (credential source, expiry, refreshes), every worker's merged and each one's own
 *   POST /admin/v1/console/validate       a gateway.yaml (text/plain or application/yaml body): the errors a reload would report; nothing is applied
 *
 * With `server.workers` every figure covers the whole cluster: the worker that answers gathers
 * every worker's snapshot through the primary (src/cluster/console.ts) and merges them; what a
 * worker keeps alone (a cooldown, a reload's outcome) says which worker it is.
 *
 * The page is a shell: it holds no data until the admin key is entered, and the key stays in
 * sessionStorage, sent only in the Authorization header (never in a URL). The page, its script
 * and stylesheet come from this gateway under a strict Content-Security-Policy.
 */
import { readFile } from 'node:fs/promises';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { requireAdmin } from '../../admin/auth.ts';
import { RecentActivity } from '../../console/activity.ts';
import { consoleCluster } from '../../console/cluster-link.ts';
import { ClusterConsole } from '../../console/cluster-view.ts';
import { maskedConfigFile, validateConfigText } from '../../console/config-view.ts';
import { localSnapshot, type ConsoleQuery } from '../../console/snapshot.ts';
import { keys, overview, teams, type ConsoleSource } from '../../console/views.ts';
import { GatewayError } from '../../errors.ts';
import { StateUnavailableError, type StateBackend } from '../../governance/index.ts';
import type { Runtime } from '../../runtime/build.ts';
import type { RouteModule, ServerDeps } from '../surface.ts';

export const CONSOLE_CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const ASSETS = new URL('../../console/assets/', import.meta.url);
/** The files the page is made of: nothing else under /console/assets is served. */
const ASSET_TYPES: Record<string, string> = {
  'console.js': 'text/javascript; charset=utf-8',
  'api.js': 'text/javascript; charset=utf-8',
  'dom.js': 'text/javascript; charset=utf-8',
  'overview.js': 'text/javascript; charset=utf-8',
  'views.js': 'text/javascript; charset=utf-8',
  'console.css': 'text/css; charset=utf-8',
  'favicon.svg': 'image/svg+xml',
};
const SECURITY_HEADERS = {
  'content-security-policy': CONSOLE_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
};
const VALIDATE_LIMIT = 1024 * 1024;

export const consoleRoutes: RouteModule = {
  surface: [
    { pattern: /^\/console\/?$/, method: 'GET' },
    { pattern: /^\/console\/assets\/[^/]+$/, method: 'GET' },
    { pattern: /^\/admin\/v1\/console\/(overview|targets|keys|teams|requests|config|providers)\/?$/, method: 'GET' },
    { pattern: /^\/admin\/v1\/console\/requests\/[^/]+$/, method: 'GET' },
    { pattern: /^\/admin\/v1\/console\/validate\/?$/, method: 'POST' },
  ],
  register(app, deps) {
    const fallback: ConsoleSource = { activity: new RecentActivity(), env: process.env, now: Date.now };
    const source = () => deps.console ?? fallback;
    const local = (query: ConsoleQuery) => localSnapshot({ runtime: deps.getRuntime(), source: source(), readiness: deps.readiness?.() ?? {} }, query);
    const cluster = consoleCluster();
    cluster?.serve(local);
    /** Every process's figures: this one's alone, or every cluster worker's. */
    const gather = async (query: ConsoleQuery) => new ClusterConsole(cluster ? await cluster.gather(query) : { snapshots: [local(query)], missing: [] });
    const assets = new Map<string, Promise<Buffer>>();
    const asset = (name: string) => {
      let file = assets.get(name);
      if (!file) assets.set(name, (file = readFile(new URL(name, ASSETS))));
      return file;
    };

    app.get('/console', async function consolePage(_request, reply) {
      reply.headers({ ...SECURITY_HEADERS, 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-cache' }).send(await asset('index.html'));
    });
    app.get('/console/assets/:name', async function consoleAsset(request, reply) {
      const { name } = request.params as { name: string };
      const type = Object.hasOwn(ASSET_TYPES, name) ? ASSET_TYPES[name] : undefined;
      if (!type) throw new GatewayError('not_found', `Unknown console asset: ${name.slice(0, 64)}.`);
      reply.headers({ ...SECURITY_HEADERS, 'content-type': type, 'cache-control': 'no-cache' }).send(await asset(name));
    });

    app.get(
      '/admin/v1/console/overview',
      admin(deps, async (runtime) => overview(runtime, await gather({ recent: 0 }))),
    );
    app.get(
      '/admin/v1/console/targets',
      admin(deps, async (runtime) => {
        const view = await gather({ recent: 0 });
        return { object: 'list', data: view.targets(runtime), scope: view.scope() };
      }),
    );
    app.get(
      '/admin/v1/console/keys',
      admin(deps, async (runtime) => {
        const view = await gather({ recent: 0 });
        return { object: 'list', data: await fromState(deps, (state) => keys(runtime, state, view.activity, deps.ledger)), scope: view.scope() };
      }),
    );
    app.get(
      '/admin/v1/console/teams',
      admin(deps, async (runtime) => {
        const view = await gather({ recent: 0 });
        return { object: 'list', data: await fromState(deps, (state) => teams(runtime, state, view.activity)), scope: view.scope() };
      }),
    );
    app.get(
      '/admin/v1/console/requests',
      admin(deps, async (_runtime, request) => {
        const asked = Number((request.query as { limit?: string }).limit ?? 50);
        const limit = Number.isInteger(asked) && asked > 0 ? Math.min(asked, 200) : 50;
        const view = await gather({ recent: limit });
        return { object: 'list', data: view.activity.recent(limit), scope: view.scope() };
      }),
    );
    app.get(
      '/admin/v1/console/requests/:id',
      admin(deps, async (_runtime, request) => {
        const { id } = request.params as { id: string };
        const found = (await gather({ recent: 200 })).activity.request(id);
        if (!found) throw new GatewayError('not_found', 'No such request among the recent ones the console keeps.');
        return found;
      }),
    );
    app.get(
      '/admin/v1/console/config',
      admin(deps, async (runtime) => {
        const [{ file, text }, view] = await Promise.all([maskedConfigFile(runtime), gather({ recent: 0 })]);
        return { file, generation: runtime.generation, text, last_reload: view.lastReload(), scope: view.scope() };
      }),
    );
    app.get(
      '/admin/v1/console/providers',
      admin(deps, async () => {
        const view = await gather({ recent: 0 });
        return { object: 'list', data: view.providers(), scope: view.scope() };
      }),
    );
    // A scope of its own: only here is a text body accepted (chat endpoints take JSON only).
    app.register(function validateScope(scope: FastifyInstance, _options: unknown, done: (err?: Error) => void) {
      scope.addContentTypeParser(['text/plain', 'application/yaml', 'application/x-yaml', 'text/yaml'], { parseAs: 'string', bodyLimit: VALIDATE_LIMIT }, (_req, body, parsed) => parsed(null, body));
      scope.post(
        '/admin/v1/console/validate',
        admin(deps, async (runtime, request) => {
          if (typeof request.body !== 'string')
            throw new GatewayError('unsupported_media_type', 'Send the gateway.yaml to validate as the body, with "Content-Type: text/plain" (or application/yaml).');
          return validateConfigText(request.body, runtime, source().env);
        }),
      );
      done();
    });
  },
};

type Answer = (runtime: Runtime, request: FastifyRequest) => unknown;

/** Like the admin API: the admin key of the current generation, no-store, 401 with WWW-Authenticate. */
function admin({ getRuntime }: ServerDeps, answer: Answer) {
  return async function consoleEndpoint(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const runtime = getRuntime();
    requireAdmin(request, reply, runtime.config);
    reply.send(await answer(runtime, request));
  };
}

/** A figure from the state backend; a backend that cannot be reached is a 503 that says so. */
async function fromState<T>({ state }: ServerDeps, read: (state: StateBackend) => Promise<T>): Promise<T> {
  if (!state) throw unavailable();
  try {
    return await read(state);
  } catch (err) {
    if (err instanceof StateUnavailableError) throw unavailable();
    throw err;
  }
}

function unavailable(): GatewayError {
  return new GatewayError('limits_unavailable', 'The state backend cannot be reached right now; usage, spend and quotas are kept there, so try again shortly.', { headers: { 'retry-after': '1' } });
}
