// The slice of autocannon's API the benchmark uses (the package ships no types).
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  interface Options {
    url: string;
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    connections?: number;
    duration?: number;
    /** Seconds before an answer counts as timed out (default 10). */
    timeout?: number;
    /** Each whole response body; a falsy return counts as a mismatch. */
    verifyBody?: (body: string) => boolean;
    /** Replace each `[<id>]` in the body with a new random id per request. */
    idReplacement?: boolean;
  }
  interface Result {
    errors: number;
    timeouts: number;
    mismatches: number;
    non2xx: number;
    statusCodeStats: Record<string, { count: number }>;
  }
  /** With a callback, the run's tracker: it emits `response` (client, statusCode, bytes, ms) per answer. */
  export default function autocannon(options: Options, done: (err: Error | null, result: Result) => void): EventEmitter;
}
