/**
 * One gateway per provider family, each sending every model name (its plain alias `agent` and,
 * through `"*"`, whatever default a client release asks for) to one target on the scripted
 * upstream. A client whose protocol is the family's own runs in native pass-through; any other
 * is translated.
 */
import { startTestGateway, type TestGateway } from '../../src/kit/testing/index.ts';

export const FAMILIES = ['openai', 'anthropic', 'gemini'] as const;
export type Family = (typeof FAMILIES)[number];

/** The plain alias every gateway serves. */
export const ALIAS = 'agent';
/** Each client's own key, named after it, so the gateway's log lines say which client sent what (never sent upstream: the providers have their own). */
export function keyFor(keyName: string): string {
  return `sk-switchyard-${keyName}-0123456789`;
}

function providerFor(family: Family, upstreamUrl: string): Record<string, unknown> {
  if (family === 'openai') return { plugin: 'openai', baseUrl: `${upstreamUrl}/v1`, apiKey: 'sk-upstream-openai' };
  return { plugin: family, baseUrl: upstreamUrl, apiKey: `upstream-${family}-key` };
}

const UPSTREAM_MODEL: Record<Family, string> = { openai: 'gpt-upstream', anthropic: 'claude-upstream', gemini: 'gemini-upstream' };

export function gatewayConfig(family: Family, upstreamUrl: string, keyNames: string[]): Record<string, unknown> {
  const target = { targets: [{ provider: family, model: UPSTREAM_MODEL[family] }] };
  return {
    keys: keyNames.map((name) => ({ name, key: keyFor(name), models: ['*'] })),
    providers: { [family]: providerFor(family, upstreamUrl) },
    models: { [ALIAS]: target, '*': target },
  };
}

export async function startGateways(upstreamUrl: string, keyNames: string[]): Promise<Record<Family, TestGateway>> {
  const started = await Promise.all(FAMILIES.map((f) => startTestGateway(gatewayConfig(f, upstreamUrl, keyNames))));
  return Object.fromEntries(FAMILIES.map((f, i) => [f, started[i]!])) as Record<Family, TestGateway>;
}
