/** Inputs for the pure provider modules' unit tests: a ProviderCall, and recorded SSE as events. */
import { vi } from 'vitest';
import type { ChatCompletionRequest } from '../../src/openai-types.ts';
import type { ProviderCall } from '../../src/plugin-api.ts';
import { decodeSseJson, type SseJsonEvent } from '../../src/providers/http-provider.ts';
import { loadFixture } from './fake-upstream.ts';

/** `callOf(request, extra)` for one provider and target model; `log.info` is a spy (dropped parameters). */
export function callFactory(defaults: { provider: string; model: string }) {
  return (request: Partial<ChatCompletionRequest>, extra: Partial<ProviderCall> = {}): ProviderCall => ({
    provider: defaults.provider,
    request: { model: 'alias', messages: [{ role: 'user', content: 'hi' }], ...request } as ChatCompletionRequest,
    model: defaults.model,
    stream: Boolean(request.stream),
    signal: new AbortController().signal,
    requestId: 'req_test',
    log: { info: vi.fn() } as unknown as ProviderCall['log'],
    dropUnsupportedParams: false,
    timeouts: { connectMs: 1000, firstByteMs: 1000, idleMs: 1000, totalMs: 1000 },
    ...extra,
  });
}

/** A recorded `.sse` fixture through the core's SSE decoder, as the gateway would see it. */
export async function sseEventsOf(provider: string, name: string): Promise<SseJsonEvent[]> {
  const bytes = loadFixture(provider, name).body;
  const events: SseJsonEvent[] = [];
  for await (const e of decodeSseJson((async function* () { yield new Uint8Array(bytes); })())) events.push(e);
  return events;
}
