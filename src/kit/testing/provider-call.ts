/** Inputs for a provider's pure functions (request, response, stream translator) in unit tests. */
import pino from 'pino';
import { vi } from 'vitest';
import type { ChatCompletionRequest, ProviderCall } from '../../index.ts';

/** What the gateway fills in from gateway.yaml: short timeouts, the default server.upstreamBodyLimit (32mb). */
const LIMITS = { timeouts: { connectMs: 1000, firstByteMs: 1000, idleMs: 1000, totalMs: 1000 }, maxResponseBytes: 32 * 1024 * 1024 };

/**
 * `callOf(request, extra)` for one provider name and target model: the ProviderCall the gateway
 * would pass, with a one-user-message request by default and `log.info` a spy (the gateway logs
 * dropped parameters there).
 *
 * @example
 * const callOf = callFactory({ provider: 'acme', model: 'acme-large' });
 * const body = buildRequest(callOf({ temperature: 0.2 }));
 */
export function callFactory(defaults: { provider: string; model: string }) {
  return function callOf(request: Partial<ChatCompletionRequest>, extra: Partial<ProviderCall> = {}): ProviderCall {
    return {
      provider: defaults.provider,
      request: { model: 'alias', messages: [{ role: 'user', content: 'hi' }], ...request } as ChatCompletionRequest,
      model: defaults.model,
      stream: Boolean(request.stream),
      signal: new AbortController().signal,
      requestId: 'req_test',
      log: silentLog(),
      dropUnsupportedParams: false,
      ...LIMITS,
      ...extra,
    };
  };
}

/** A real logger that writes nothing, its `info` a spy (what providers log per call). */
function silentLog(): ProviderCall['log'] {
  const log = pino({ level: 'silent' });
  vi.spyOn(log, 'info');
  return log;
}
