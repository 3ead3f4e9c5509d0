/**
 * The admin API (JSON, `Authorization: Bearer <admin key>`; see README "Keys, limits and budgets"):
 *
 *   GET /admin/v1/usage   requests, tokens and cost per UTC day, grouped by key/team/model
 *                         (the shape of OpenAI's GET /v1/organization/usage/completions)
 *   GET /admin/v1/costs   the same buckets narrowed to USD (OpenAI's GET /v1/organization/costs)
 *   GET /admin/v1/keys    each key: team, metadata, expiry, limits, what is left now, budget
 *   GET /admin/v1/teams   each team: its keys, limits, what is left now, budget
 *
 * Figures come from the state backend every instance shares; when it cannot be reached the
 * answer is 503 `limits_unavailable`, never figures made up from this instance alone.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { requireAdmin } from '../../admin/auth.ts';
import { parseUsageQuery, type QueryString } from '../../admin/query.ts';
import { costsPage, keyReports, keyScopes, quotasOf, teamReports, teamScopes } from '../../admin/report.ts';
import { GatewayError } from '../../errors.ts';
import { StateUnavailableError, type StateBackend } from '../../governance/index.ts';
import type { Runtime } from '../../runtime/build.ts';
import type { RouteModule, ServerDeps } from '../surface.ts';

export const adminRoutes: RouteModule = {
  surface: [{ pattern: /^\/admin\/v1\/(usage|costs|keys|teams)\/?$/, method: 'GET' }],
  register(app, deps) {
    app.get(
      '/admin/v1/usage',
      admin(deps, async (state, _runtime, query) => state.usage(parseUsageQuery(query, Date.now()))),
    );
    app.get(
      '/admin/v1/costs',
      admin(deps, async (state, _runtime, query) => costsPage(await state.usage(parseUsageQuery(query, Date.now())))),
    );
    app.get(
      '/admin/v1/keys',
      admin(deps, async (state, { config }) => ({ object: 'list', data: keyReports(config, await quotasOf(state, keyScopes(config)), Date.now()) })),
    );
    app.get(
      '/admin/v1/teams',
      admin(deps, async (state, { config }) => ({ object: 'list', data: teamReports(config, await quotasOf(state, teamScopes(config))) })),
    );
  },
};

type Answer = (state: StateBackend, runtime: Runtime, query: QueryString) => Promise<unknown>;

/** Checks the admin key against the current generation's `admin.keys`, then answers; the backend's outage is a 503. */
function admin({ getRuntime, state, log }: ServerDeps, answer: Answer) {
  return async function adminEndpoint(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const runtime = getRuntime();
    requireAdmin(request, reply, runtime.config);
    if (!state) throw unavailable();
    let body: unknown;
    try {
      body = await answer(state, runtime, request.query as QueryString);
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
