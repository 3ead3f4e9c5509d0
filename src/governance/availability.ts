/**
 * Whether a remote store answers, logged once per change (connected, lost, back) rather than
 * once per failed request: an outage under load would otherwise write a line per request.
 */
import type { GovernanceLogger } from './types.ts';

type State = 'unknown' | 'up' | 'down';

export class Availability {
  #state: State = 'unknown';
  readonly #log: GovernanceLogger;
  readonly #what: string;

  constructor(log: GovernanceLogger, what: string) {
    this.#log = log;
    this.#what = what;
  }

  get up(): boolean {
    return this.#state === 'up';
  }

  markUp(): void {
    if (this.#state === 'up') return;
    const recovered = this.#state === 'down';
    this.#state = 'up';
    this.#log.info({ stateBackend: this.#what }, recovered ? `${this.#what} is reachable again` : `${this.#what} connected`);
  }

  markDown(reason: unknown): void {
    if (this.#state === 'down') return;
    this.#state = 'down';
    const message = reason instanceof Error ? reason.message : String(reason);
    this.#log.error({ stateBackend: this.#what, reason: message }, `${this.#what} is unreachable`);
  }
}
