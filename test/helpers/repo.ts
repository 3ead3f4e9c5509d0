/** What only this repository's tests need: its paths and a terse gateway.yaml builder. The rest is in switchyard-gateway/kit/testing. */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEV_KEY } from 'switchyard-gateway/kit/testing';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** Recorded provider payloads, one folder per provider (see test/fixtures/README.md). */
export const FIXTURES = path.join(ROOT, 'test/fixtures');

/** The fixtures folder of one provider, for the kit's loadFixture / sseEventsOf. */
export function fixturesOf(provider: 'openai' | 'anthropic' | 'gemini' | 'bedrock' | 'azure'): string {
  return path.join(FIXTURES, provider);
}

/** A gateway.yaml for tests: one dev key, the given providers and models (YAML fragments). */
export function configYaml(parts: { providers: string; models: string; keys?: string; pipeline?: string; extra?: string }): string {
  return [
    'keys:',
    parts.keys ?? `  - { name: dev, key: ${DEV_KEY}, models: ["*"] }`,
    'providers:',
    parts.providers,
    'models:',
    parts.models,
    parts.pipeline ? `pipeline: ${parts.pipeline}` : '',
    parts.extra ?? '',
  ].join('\n');
}
