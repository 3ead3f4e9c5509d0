/**
 * One gateway per provider family, each sending every model name (its plain alias `agent` and,
 * through `"*"`, whatever default a client release asks for) to one target on the scripted
 * upstream. A client whose protocol is the family's own runs in native pass-through; any other
 * is translated. Bedrock comes twice: Converse (every client, translated) and Claude's own
 * Messages body (`api: messages`, for the clients that speak Messages: passed through), both
 * SigV4-signed with keys the scripted upstream checks.
 */
import { startTestGateway, type TestGateway } from '../../src/kit/testing/index.ts';
import type { AgentClient } from './clients/run.ts';
import { BEDROCK_KEYS } from './script/upstream.ts';

export const FAMILIES = ['openai', 'anthropic', 'gemini', 'bedrock', 'bedrock-messages'] as const;
export type Family = (typeof FAMILIES)[number];

/** The matrix's column heading of each family. */
export const FAMILY_LABEL: Record<Family, string> = {
  openai: '`openai`',
  anthropic: '`anthropic`',
  gemini: '`gemini`',
  bedrock: '`bedrock` (Converse)',
  'bedrock-messages': '`bedrock` (`api: messages`)',
};

/** The families a client runs against: `api: messages` is Claude's own body, meaningful for the clients that speak Messages. */
export function familiesFor(client: AgentClient): Family[] {
  return FAMILIES.filter((f) => f !== 'bedrock-messages' || client.speaks === 'messages');
}

/** The plain alias every gateway serves. */
export const ALIAS = 'agent';
/** Each client's own key, named after it, so the gateway's log lines say which client sent what (never sent upstream: the providers have their own). */
export function keyFor(keyName: string): string {
  return `sk-switchyard-${keyName}-0123456789`;
}

function providerFor(family: Family, upstreamUrl: string): Record<string, unknown> {
  if (family === 'bedrock' || family === 'bedrock-messages') {
    const api = family === 'bedrock-messages' ? 'messages' : 'converse';
    return { plugin: 'bedrock', region: 'us-east-1', endpoint: upstreamUrl, api, auth: { type: 'aws-keys', ...BEDROCK_KEYS } };
  }
  if (family === 'openai') return { plugin: 'openai', baseUrl: `${upstreamUrl}/v1`, apiKey: 'sk-upstream-openai' };
  return { plugin: family, baseUrl: upstreamUrl, apiKey: `upstream-${family}-key` };
}

/** Bedrock's targets are a Claude model (what agents on Bedrock run), through Converse or in Claude's own body. */
const BEDROCK_CLAUDE = 'us.anthropic.claude-sonnet-4-5-20250929-v1:0';
const UPSTREAM_MODEL: Record<Family, string> = {
  openai: 'gpt-upstream',
  anthropic: 'claude-upstream',
  gemini: 'gemini-upstream',
  bedrock: BEDROCK_CLAUDE,
  'bedrock-messages': BEDROCK_CLAUDE,
};

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
