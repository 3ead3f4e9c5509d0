import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Runtime } from '../runtime/build.ts';
import type { Exchange } from '../pipeline/exchange.ts';
import type { ConsoleSource } from '../console/views.ts';
import type { GatewayObserver } from '../pipeline/observer.ts';
import type { StateBackend } from '../governance/index.ts';
import type { RequestLedger } from '../ledger/index.ts';
import type { ResponseStore } from '../responses-store/index.ts';

/** What the route modules need from the gateway. */
export interface ServerDeps {
  /** The config generation current when a request arrives: a reload never changes a request midway. */
  getRuntime(): Runtime;
  /** A chat request started (the gateway tracks live requests to end them at shutdown). */
  onRequestStart?(exchange: Exchange): void;
  /** A chat request that ran on `runtime` has finished (for draining old generations). */
  onRequestDone?(runtime: Runtime, exchange: Exchange): void;
  log: Logger;
  /** The gateway's instruments; every request is reported to them. */
  observer: GatewayObserver;
  /** Limits, budgets and usage records, shared by every generation (the admin API reads them). */
  state?: StateBackend;
  /** The per-request books, when kept (`state.ledger`): usage reports and single requests are read from it. */
  ledger?: RequestLedger;
  /** Stored Responses (`state.responses`), shared by every generation; absent when none are kept. */
  responses?: ResponseStore;
  /** What the console reads beyond the routes' dependencies (its recent activity); absent: an empty console. */
  console?: ConsoleSource;
  /** Extra readiness details (e.g. the last reload's outcome). */
  readiness?(): Record<string, unknown>;
}

/** One group of endpoints: its paths (for OpenAI-shaped 404 vs 405) and how to register them. */
export interface RouteModule {
  /** Path patterns with the one method each accepts. */
  surface: ReadonlyArray<{ pattern: RegExp; method: string }>;
  register(app: FastifyInstance, deps: ServerDeps): void;
}
