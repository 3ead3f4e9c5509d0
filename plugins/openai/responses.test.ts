/** Which configurations pass /v1/responses through, and where to (openai and azure-openai). */
import { describe, expect, it } from 'vitest';
import type { ProviderInstance, ProviderPlugin } from 'switchyard-gateway';
import openai, { servesResponses } from './index.ts';
import azure, { azureResponsesPath } from '../azure-openai/index.ts';

const env = { name: 'p', log: { debug() {}, info() {}, warn() {}, error() {} }, configDir: '.' } as never;

async function protocolsOf<O>(plugin: ProviderPlugin<O>, options: O): Promise<readonly string[] | undefined> {
  const instance = (await plugin.create(options, env)) as ProviderInstance;
  try {
    return instance.nativeProtocols;
  } finally {
    await instance.close?.();
  }
}

describe('native Responses: who serves it', () => {
  it('openai: on for OpenAI itself, off for other servers unless nativeResponses says so', async () => {
    expect(servesResponses({ baseUrl: 'https://api.openai.com/v1' })).toBe(true);
    expect(servesResponses({ baseUrl: 'http://127.0.0.1:11434/v1' })).toBe(false);
    expect(servesResponses({ baseUrl: 'http://127.0.0.1:8000/v1', nativeResponses: true })).toBe(true);
    expect(servesResponses({ baseUrl: 'https://api.openai.com/v1', nativeResponses: false })).toBe(false);
    expect(openai.capabilities?.nativeProtocols).toEqual(['openai-responses']);
    expect(await protocolsOf(openai, { baseUrl: 'http://127.0.0.1:8000/v1' })).toEqual([]);
    expect(await protocolsOf(openai, { baseUrl: 'http://127.0.0.1:8000/v1', nativeResponses: true })).toEqual(['openai-responses']);
  });

  it('azure-openai: on unless nativeResponses is false; the Responses path of each URL form', async () => {
    expect(await protocolsOf(azure, { endpoint: 'http://127.0.0.1:1', apiKey: 'k' })).toEqual(['openai-responses']);
    expect(await protocolsOf(azure, { endpoint: 'http://127.0.0.1:1', apiKey: 'k', nativeResponses: false })).toEqual([]);
    expect(azureResponsesPath({ mode: 'v1' })).toBe('/openai/v1/responses');
    expect(azureResponsesPath({ mode: 'deployments' })).toBe('/openai/responses?api-version=2025-04-01-preview');
    expect(azureResponsesPath({ responsesApiVersion: '2025-05-01-preview' })).toBe('/openai/responses?api-version=2025-05-01-preview');
  });
});
