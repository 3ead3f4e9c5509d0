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

/** Several observers as one; a failing observer never fails a request. */
export function combineObservers(observers: readonly GatewayObserver[], onError: (err: unknown) => void): GatewayObserver {
  if (observers.length === 0) return {};
  const guard =
    <A extends unknown[], R>(fn: (o: GatewayObserver, ...args: A) => R | undefined) =>
    (...args: A): R | undefined => {
      let result: R | undefined;
      for (const o of observers) {
        try {
          result = fn(o, ...args) ?? result;
        } catch (err) {
          onError(err);
        }
      }
      return result;
    };
  return {
    requestStarted: guard((o, ctx: ExchangeView) => o.requestStarted?.(ctx)),
    attemptStarted: guard((o, ctx: ExchangeView, a: AttemptView) => o.attemptStarted?.(ctx, a)),
    attemptEnded: guard((o, ctx: ExchangeView, a: AttemptView, r: AttemptRecord) => o.attemptEnded?.(ctx, a, r)),
    requestEnded: guard((o, ctx: ExchangeView) => o.requestEnded?.(ctx)),
    unknownRoute: guard((o, method: string, status: number) => o.unknownRoute?.(method, status)),
  };
}
