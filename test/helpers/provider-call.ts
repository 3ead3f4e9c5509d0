/** Kept for the plugins' unit tests (plugins/<name>/*.test.ts), which import it by this path: the kit's ProviderCall factory, and recorded SSE by provider name. */
import type { SseJsonEvent } from 'switchyard-gateway/kit';
import { sseEventsOf as sseEventsIn } from 'switchyard-gateway/kit/testing';
import { fixturesOf } from './repo.ts';

export { callFactory } from 'switchyard-gateway/kit/testing';

/** test/fixtures/<provider>/<name>.sse through the core's SSE decoder. */
export function sseEventsOf(provider: Parameters<typeof fixturesOf>[0], name: string): Promise<SseJsonEvent[]> {
  return sseEventsIn(fixturesOf(provider), name);
}
