/** Azure's URLs, stream quirks and error bodies. */
import { describe, expect, it } from 'vitest';
import type { ChatCompletionChunk } from 'switchyard-gateway';
import { decodeSseJson, UpstreamError, categorize, type SseJsonEvent } from 'switchyard-gateway/kit';
import { azurePath, createAzureStreamTranslator, readAzureError } from './index.ts';
import { loadFixture } from 'switchyard-gateway/kit/testing';

/** This provider's recorded payloads. */
const FIXTURES = new URL('../../test/fixtures/azure/', import.meta.url);

async function eventsOf(name: string): Promise<SseJsonEvent[]> {
  const bytes = loadFixture(FIXTURES, name).body;
  const events: SseJsonEvent[] = [];
  for await (const e of decodeSseJson(
    (async function* () {
      yield new Uint8Array(bytes);
    })(),
  ))
    events.push(e);
  return events;
}

function translate(events: SseJsonEvent[]): ChatCompletionChunk[] {
  const t = createAzureStreamTranslator('az');
  const out: ChatCompletionChunk[] = [];
  for (const e of events) {
    const r = t.push(e);
    if (r) out.push(...(Array.isArray(r) ? r : [r]));
  }
  t.end?.();
  return out;
}

describe('azurePath', () => {
  it('deployments: the target model names the deployment, api-version in the query', () => {
    expect(azurePath({ mode: 'deployments', apiVersion: '2024-10-21' }, 'gpt-4o')).toBe('/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21');
    expect(azurePath({}, 'my deployment/1')).toBe('/openai/deployments/my%20deployment%2F1/chat/completions?api-version=2024-10-21');
  });

  it('v1: one path, the model in the body', () => {
    expect(azurePath({ mode: 'v1', apiVersion: '2024-10-21' }, 'gpt-4o')).toBe('/openai/v1/chat/completions');
  });
});

describe('stream', () => {
  it('the prompt_filter_results preamble is folded into the first real chunk', async () => {
    const events = await eventsOf('stream-basic-content-filter');
    expect(events[0].data).toMatchObject({ id: '', model: '', object: '', choices: [] });
    const chunks = translate(events);
    expect(chunks).toHaveLength(events.length - 1);
    expect(chunks[0].id).toBe('chatcmpl-BleatwEUn3D8iXsgXpDqeOPEMuW3j');
    expect(chunks[0].prompt_filter_results).toEqual((events[0].data as { prompt_filter_results: unknown }).prompt_filter_results);
    expect(chunks.slice(1).some((c) => 'prompt_filter_results' in c)).toBe(false);
    expect(chunks[1].choices[0].content_filter_results).toMatchObject({ violence: { filtered: false, severity: 'safe' } });
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('Hallo Welt!');
  });

  it('the model-router stream keeps its usage chunk and reasoning token counts', async () => {
    const chunks = translate(await eventsOf('stream-model-router-usage'));
    expect(chunks.every((c) => c.id === 'chatcmpl-CYPS1lijGoK8gd9lYzY3r9Sx50nbt')).toBe(true);
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 15, completion_tokens: 78, total_tokens: 93, completion_tokens_details: { reasoning_tokens: 64 } } });
  });

  it('asynchronous-filter chunks without a delta get an empty one; content_filter finishes pass through', () => {
    const base = { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o' };
    const chunks = translate([
      { data: { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: 'Hi' }, finish_reason: null }] } },
      {
        data: {
          ...base,
          choices: [
            { index: 0, finish_reason: null, content_filter_offsets: { check_offset: 0, start_offset: 0, end_offset: 2 }, content_filter_results: { hate: { filtered: false, severity: 'safe' } } },
          ],
        },
      },
      { data: { ...base, choices: [{ index: 0, delta: {}, finish_reason: 'content_filter' }] } },
    ]);
    expect(chunks[1].choices[0]).toMatchObject({ delta: {}, content_filter_offsets: { end_offset: 2 } });
    expect(chunks[2].choices[0].finish_reason).toBe('content_filter');
  });

  it('an error event and a stream without a finish are failures, as for OpenAI', () => {
    const t = createAzureStreamTranslator('az');
    expect(() => t.push({ data: { error: { code: 'content_filter', message: 'The response was filtered' } } })).toThrow(UpstreamError);
    expect(() => translate([{ data: { choices: [], id: '', model: '', object: '', prompt_filter_results: [] } }])).toThrow(/no finish_reason/);
  });
});

describe('readAzureError', () => {
  it('a 429 with code "429" as a string and the wait only in its message', () => {
    const f = loadFixture(FIXTURES, 'error-429-rate-limit');
    expect(readAzureError(429, f.json)).toEqual({ message: 'Rate limit is exceeded. Try again in 2 seconds.', code: '429', param: null, retryAfterMs: 2000 });
  });

  it('a content-filter 400 says so, names the filtered categories and is a content_policy refusal', () => {
    const failure = readAzureError(400, loadFixture(FIXTURES, 'error-400-content-filter').json);
    expect(failure.message).toMatch(/^The response was filtered due to the prompt triggering Azure OpenAI's content management policy\..* \(content filter: violence \(medium\)\)$/);
    expect(failure).toMatchObject({ code: 'content_filter', param: 'messages', category: 'content_policy' });
    expect(categorize(failure)).toBe('content_policy');
  });

  it('a jailbreak detection is named; other errors are left as they are', () => {
    const jailbreak = readAzureError(400, {
      error: {
        code: 'content_filter',
        message: 'Filtered.',
        innererror: { code: 'ResponsibleAIPolicyViolation', content_filter_result: { jailbreak: { filtered: true, detected: true }, hate: { filtered: false, severity: 'safe' } } },
      },
    });
    expect(jailbreak.message).toBe('Filtered. (content filter: jailbreak)');
    expect(readAzureError(404, { error: { code: 'DeploymentNotFound', message: 'The API deployment for this resource does not exist.' } })).toEqual({
      message: 'The API deployment for this resource does not exist.',
      code: 'DeploymentNotFound',
      param: null,
    });
    expect(readAzureError(401, { error: { code: '401', message: 'Access denied due to invalid subscription key.' } })).toMatchObject({ code: '401' });
  });
});
