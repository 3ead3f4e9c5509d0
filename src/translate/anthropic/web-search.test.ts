/** Anthropic's server web search, recorded (test/fixtures/anthropic/*web-search*), → the gateway's web_search_calls and annotations; and the tool it is asked with. */
import { describe, expect, it } from 'vitest';
import { loadFixture, sseEventsOf } from 'switchyard-gateway/kit/testing';
import type { ChatCompletionChunk, ChatCompletionRequest, UrlCitation } from '../../openai-types.ts';
import type { Drop, ProviderCall } from '../../plugin-api.ts';
import { buildAnthropicRequest } from './request.ts';
import { anthropicToCompletion } from './response.ts';
import { createAnthropicStreamTranslator } from './stream.ts';

const FIXTURES = new URL('../../../test/fixtures/anthropic/', import.meta.url);

function callOf(request: Partial<ChatCompletionRequest> = {}, drops: Drop[] = []): ProviderCall {
  return {
    provider: 'claude',
    model: 'claude-x',
    requestId: 'req_1',
    request: { model: 'm', messages: [{ role: 'user', content: 'hi' }], ...request },
    drop: (d: Drop) => drops.push(d),
  } as unknown as ProviderCall;
}

const spans = (text: string, annotations: UrlCitation[] | undefined) => (annotations ?? []).map((a) => [a.url_citation.url, text.slice(a.url_citation.start_index, a.url_citation.end_index)]);

describe('the request', () => {
  it('web_search → the web_search_20250305 server tool after the function tools; both domain lists cannot go, the blocked one is reported', () => {
    const drops: Drop[] = [];
    const body = buildAnthropicRequest(
      callOf(
        {
          tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }],
          web_search: { field: 'tools[1]', what: 'web_search', max_uses: 2, allowed_domains: ['a.example'], blocked_domains: ['b.example'], user_location: { country: 'FR' } },
        },
        drops,
      ),
      { maxTokens: 100 },
    );
    expect(body.tools).toEqual([
      { name: 'f', input_schema: { type: 'object' } },
      { type: 'web_search_20250305', name: 'web_search', max_uses: 2, allowed_domains: ['a.example'], user_location: { type: 'approximate', country: 'FR' } },
    ]);
    expect(drops.map((d) => [d.field, d.what])).toEqual([['tools[1]', 'web_search blocked_domains']]);
  });

  it("a chat client's own web_search of the wrong shape sends no setting upstream", () => {
    const junk = { allowed_domains: 'a.example', max_uses: -1, user_location: 'Paris', blocked_domains: [3, 'b.example'] } as unknown as ChatCompletionRequest['web_search'];
    const body = buildAnthropicRequest(callOf({ web_search: junk }), { maxTokens: 100 });
    expect(body.tools).toEqual([{ type: 'web_search_20250305', name: 'web_search', blocked_domains: ['b.example'] }]);
    expect(buildAnthropicRequest(callOf({ web_search: 'yes' as unknown as ChatCompletionRequest['web_search'] }), { maxTokens: 100 }).tools).toBeUndefined();
  });

  it('a function tool already named web_search keeps its name; the search is reported dropped', () => {
    const drops: Drop[] = [];
    const body = buildAnthropicRequest(callOf({ tools: [{ type: 'function', function: { name: 'web_search' } }], web_search: { field: 'tools[1]' } }, drops), { maxTokens: 100 });
    expect((body.tools as Array<{ name: string; type?: string }>).map((t) => t.type ?? t.name)).toEqual(['web_search']);
    expect(drops.map((d) => d.field)).toEqual(['tools[1]']);
  });
});

describe('the answer', () => {
  it('plain: each server_tool_use with its result is a search; each cited text block an annotation over exactly that block; searches counted in usage', () => {
    const completion = anthropicToCompletion(loadFixture(FIXTURES, 'messages-web-search').json, callOf());
    const message = completion.choices[0].message;
    expect(message.web_search_calls?.map((s) => [s.id, s.query, s.sources.length, s.status])).toEqual([
      ['srvtoolu_01Qxbje4duKBes3Nj42MkZug', 'tech news today September 26 2024', 10, 'completed'],
      ['srvtoolu_01HyorfKHSCsjCUVH6WHcNUC', '"September 26 2024" tech news breaking', 0, 'completed'],
    ]);
    const text = message.content ?? '';
    expect(spans(text, message.annotations)[0]).toEqual([
      'https://acecomments.mu.nu/?post=411647',
      "Caroline Ellison, Sam Bankman-Fried's right-hand woman in the FTX kerfuffle, has been sentenced to two years in prison for her part in the fuffling and ordered to pay $11 billion in restitution.",
    ]);
    expect(completion.usage?.server_tool_use).toEqual({ web_search_requests: 2 });
  });

  it('a search that failed says so with its error code', () => {
    const completion = anthropicToCompletion(
      {
        id: 'm',
        content: [
          { type: 'server_tool_use', id: 's1', name: 'web_search', input: { query: 'q' } },
          { type: 'web_search_tool_result', tool_use_id: 's1', content: { type: 'web_search_tool_result_error', error_code: 'max_uses_exceeded' } },
          { type: 'text', text: 'Sorry.' },
        ],
        stop_reason: 'end_turn',
        usage: { input_tokens: 1, output_tokens: 1 },
      },
      callOf(),
    );
    expect(completion.choices[0].message.web_search_calls).toEqual([{ id: 's1', query: 'q', sources: [], status: 'failed', error: 'max_uses_exceeded' }]);
  });

  it('streamed: the search once its result block arrives (query from the streamed input), citations when their block closes', async () => {
    const t = createAnthropicStreamTranslator(callOf());
    const chunks: ChatCompletionChunk[] = [];
    for (const event of await sseEventsOf(FIXTURES, 'stream-web-search')) {
      const r = t.push(event);
      if (r) chunks.push(...(Array.isArray(r) ? r : [r]));
    }
    const tail = t.end?.();
    if (tail) chunks.push(...(Array.isArray(tail) ? tail : [tail]));
    const deltas = chunks.flatMap((c) => c.choices.map((ch) => ch.delta));
    const searches = deltas.flatMap((d) => d.web_search_calls ?? []);
    expect(searches.map((s) => [s.id, s.query])).toEqual([['srvtoolu_01Bj5uzzLcYG5hfueSLcDH8k', 'tech news today September 26 2025']]);
    // The search comes before any text, as it ran before the model wrote.
    expect(deltas.findIndex((d) => d.web_search_calls)).toBeLessThan(deltas.findIndex((d) => d.content));
    const text = deltas.map((d) => d.content ?? '').join('');
    const cited = spans(
      text,
      deltas.flatMap((d) => d.annotations ?? []),
    );
    expect(cited.length).toBeGreaterThan(2);
    expect(cited[0][1]).toMatch(/^Apple today announced the grand reopening of Apple Ginza/);
    expect(chunks.at(-1)?.usage?.server_tool_use).toEqual({ web_search_requests: 1 });
  });
});
