/**
 * The admin API (JSON, `Authorization: Bearer <admin key>`; see README "Keys, limits and budgets"):
 *
 *   GET /admin/v1/usage   requests, tokens and cost per UTC day, grouped by key/team/model
 *                         (the shape of OpenAI's GET /v1/organization/usage/completions)
 *   GET /admin/v1/costs   the same buckets narrowed to USD (OpenAI's GET /v1/organization/costs)
 *   GET /admin/v1/keys    each key: team, metadata, expiry, limits, what is left now, budget
 *   GET /admin/v1/teams   each team: its keys, limits, what is left now, budget
 *   GET /admin/v1/requests/{id}   one request as the ledger booked it
 *
 * Figures come from the state backend every instance shares, and usage and spend from the
 * request ledger when one is kept (`state.ledger`); when they cannot be reached the answer is
 * 503 `limits_unavailable`, never figures made up from this instance alone.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { requireAdmin } from '../../admin/auth.ts';
import { parseUsageQuery, type QueryString } from '../../admin/query.ts';
import { costsPage, keyReports, keyScopes, quotasOf, teamReports, teamScopes, withLedgerSpend } from '../../admin/report.ts';
import { GatewayError } from '../../errors.ts';
import { StateUnavailableError, type StateBackend } from '../../governance/index.ts';
import { requestReport, type RequestLedger } from '../../ledger/index.ts';
import type { Runtime } from '../../runtime/build.ts';
import type { RouteModule, ServerDeps } from '../surface.ts';

export const adminRoutes: RouteModule = {
  surface: [
    { pattern: /^\/admin\/v1\/(usage|costs|keys|teams)\/?$/, method: 'GET' },
    { pattern: /^\/admin\/v1\/requests\/[^/]+$/, method: 'GET' },
  ],
  register(app, deps) {
    const usage = (state: StateBackend, query: QueryString) => {
      const parsed = parseUsageQuery(query, Date.now());
      return deps.ledger ? deps.ledger.usage(parsed) : state.usage(parsed);
    };
    app.get(
      '/admin/v1/usage',
      admin(deps, async (state, _runtime, query) => usage(state, query)),
    );
    app.get(
      '/admin/v1/costs',
      admin(deps, async (state, _runtime, query) => costsPage(await usage(state, query))),
    );
    app.get(
      '/admin/v1/keys',
      admin(deps, async (state, { config }) => {
        const reports = keyReports(config, await quotasOf(state, keyScopes(config)), Date.now());
        return { object: 'list', data: deps.ledger ? withLedgerSpend(reports, await deps.ledger.spendByKey()) : reports };
      }),
    );
    app.get(
      '/admin/v1/requests/:id',
      admin(deps, async (_state, _runtime, _query, params) => requestById(deps.ledger, params.id ?? '')),
    );
    app.get(
      '/admin/v1/teams',
      admin(deps, async (state, { config }) => ({ object: 'list', data: teamReports(config, await quotasOf(state, teamScopes(config))) })),
    );
  },
};

type Answer = (state: StateBackend, runtime: Runtime, query: QueryString, params: Record<string, string | undefined>) => Promise<unknown>;

async function requestById(ledger: RequestLedger | undefined, id: string): Promise<unknown> {
  if (!ledger) throw new GatewayError('not_found', 'This gateway keeps no request ledger (state.ledger); single requests are not kept.');
  const row = await ledger.request(id);
  if (!row) throw new GatewayError('not_found', `No request '${id.slice(0, 128)}' in the ledger.`);
  return requestReport(row);
}

/** Checks the admin key against the current generation's `admin.keys`, then answers; the backend's outage is a 503. */
function admin({ getRuntime, state, log }: ServerDeps, answer: Answer) {
  return async function adminEndpoint(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const runtime = getRuntime();
    requireAdmin(request, reply, runtime.config);
    if (!state) throw unavailable();
    let body: unknown;
    try {
      body = await answer(state, runtime, request.query as QueryString, request.params as Record<string, string | undefined>);
    } catch (err) {
      if (!(err instanceof StateUnavailableError)) throw err;
      log.warn({ err: err.message, reqId: request.id }, 'admin API: the state backend cannot be reached');
      throw unavailable();
    }
    reply.send(body);
  };
}

/** The reason (which may name the backend's address) goes to the log, not the answer. */
function unavailable(): GatewayError {
  return new GatewayError('limits_unavailable', 'The state backend cannot be reached right now; usage, spend and quotas are kept there, so try again shortly.', { headers: { 'retry-after': '1' } });
}
