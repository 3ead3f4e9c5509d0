/**
 * What the gateway's own instruments (metrics, traces) see of a request: its start, each
 * upstream attempt, and its end once the response is complete (streams included). Observers
 * live as long as the gateway, across reloads, so counters never go backwards.
 */
import type { AttemptRecord, AttemptView } from '../plugin-api.ts';
import type { ExchangeView } from './exchange.ts';

export interface GatewayObserver {
  requestStarted?(ctx: ExchangeView): void;
  /** An attempt is about to be sent; the headers returned go upstream with it (trace context). */
  attemptStarted?(ctx: ExchangeView, attempt: AttemptView): Record<string, string> | undefined;
  attemptEnded?(ctx: ExchangeView, attempt: AttemptView, record: AttemptRecord): void;
  /** After the response is complete and the stages' onResponse hooks ran. */
  requestEnded?(ctx: ExchangeView): void;
  /** A request for a path the gateway does not serve (404) or with the wrong method (405). */
  unknownRoute?(method: string, status: number): void;
}

/**
 * Several observers as one; a failing observer never fails a request. Each method exists only
 * when some observer has it and calls only those that do, without an arguments array: the
 * gateway calls them for every request, most observers implement two or three of them.
 */
export function combineObservers(observers: readonly GatewayObserver[], onError: (err: unknown) => void): GatewayObserver {
  const having = <K extends keyof GatewayObserver>(method: K) => observers.filter((o) => o[method] !== undefined);
  const started = having('requestStarted');
  const attemptStarted = having('attemptStarted');
  const attemptEnded = having('attemptEnded');
  const ended = having('requestEnded');
  const unknown = having('unknownRoute');
  const combined: GatewayObserver = {};
  if (started.length > 0)
    combined.requestStarted = (ctx) => {
      for (const o of started) {
        try {
          o.requestStarted?.(ctx);
        } catch (err) {
          onError(err);
        }
      }
    };
  if (attemptStarted.length > 0)
    combined.attemptStarted = (ctx, attempt) => {
      // The last observer that returns headers wins, as when they were all asked in turn.
      let headers: Record<string, string> | undefined;
      for (const o of attemptStarted) {
        try {
          headers = o.attemptStarted?.(ctx, attempt) ?? headers;
        } catch (err) {
          onError(err);
        }
      }
      return headers;
    };
  if (attemptEnded.length > 0)
    combined.attemptEnded = (ctx, attempt, record) => {
      for (const o of attemptEnded) {
        try {
          o.attemptEnded?.(ctx, attempt, record);
        } catch (err) {
          onError(err);
        }
      }
    };
  if (ended.length > 0)
    combined.requestEnded = (ctx) => {
      for (const o of ended) {
        try {
          o.requestEnded?.(ctx);
        } catch (err) {
          onError(err);
        }
      }
    };
  if (unknown.length > 0)
    combined.unknownRoute = (method, status) => {
      for (const o of unknown) {
        try {
          o.unknownRoute?.(method, status);
        } catch (err) {
          onError(err);
        }
      }
    };
  return combined;
}
