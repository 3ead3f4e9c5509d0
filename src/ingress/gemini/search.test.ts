import { describe, expect, it } from 'vitest';
import type { UrlCitation, WebSearchCall } from '../../openai-types.ts';
import { groundingOf } from '../../translate/gemini/grounding.ts';
import { urlCitation } from '../../translate/chat/web-search.ts';
import { Drops } from './drops.ts';
import { groundingMetadataOf, webSearchOfTool } from './search.ts';

describe('webSearchOfTool', () => {
  it('googleSearch: excludeDomains are blocked_domains; settings the target has no word for are reported', () => {
    const drops = new Drops();
    const search = webSearchOfTool(
      'googleSearch',
      { excludeDomains: ['spam.example', ''], timeRangeFilter: { startTime: '2026-01-01T00:00:00Z', endTime: '2026-02-01T00:00:00Z' } },
      'tools[2]',
      drops,
    );
    expect(search).toEqual({ field: 'tools[2]', what: 'googleSearch', blocked_domains: ['spam.example'] });
    expect(drops.list.map((d) => d.field)).toEqual(['tools[2].googleSearch.timeRangeFilter']);
  });

  it("googleSearchRetrieval (Gemini 1.5's): the same search; its threshold is reported", () => {
    const drops = new Drops();
    expect(webSearchOfTool('googleSearchRetrieval', { dynamicRetrievalConfig: { mode: 'MODE_DYNAMIC', dynamicThreshold: 0.3 } }, 'tools[0]', drops)).toEqual({
      field: 'tools[0]',
      what: 'googleSearchRetrieval',
    });
    expect(drops.list.map((d) => d.field)).toEqual(['tools[0].googleSearchRetrieval.dynamicRetrievalConfig']);
  });

  it('a setting of the wrong type is a 400 naming it', () => {
    expect(() => webSearchOfTool('googleSearch', { excludeDomains: 'spam.example' }, 'tools[0]', new Drops())).toThrow(/tools\[0\]\.googleSearch\.excludeDomains/);
    expect(() => webSearchOfTool('googleSearch', true, 'tools[0]', new Drops())).toThrow(/tools\[0\]\.googleSearch/);
  });
});

describe('groundingMetadataOf', () => {
  // Multi-byte characters before and inside the cited spans: UTF-16 offsets and UTF-8 bytes differ.
  const text = 'Café ☕ prices rose 5%. Tokyo 🗼 reopened its Ginza store. Nothing else.';
  const cafe = 'Café ☕ prices rose 5%.';
  const tokyo = 'Tokyo 🗼 reopened its Ginza store.';
  const at = (s: string) => [text.indexOf(s), text.indexOf(s) + s.length] as const;
  const searches: WebSearchCall[] = [
    { id: 'srvtoolu_1', query: 'cafe prices', status: 'completed', sources: [{ url: 'https://a.example/cafe', title: 'Cafe news' }, { url: 'https://b.example/' }] },
    {
      id: 'srvtoolu_2',
      query: 'ginza store',
      status: 'completed',
      sources: [
        { url: 'https://a.example/cafe', title: 'Cafe news' },
        { url: 'https://c.example/ginza', title: 'Ginza' },
      ],
    },
  ];
  const annotations: UrlCitation[] = [
    urlCitation(...at(cafe), 'https://a.example/cafe', 'Cafe news'),
    urlCitation(...at(cafe), 'https://b.example/', 'https://b.example/'),
    urlCitation(...at(tokyo), 'https://c.example/ginza', 'Ginza'),
    // A page cited that no search listed: it still gets a chunk.
    urlCitation(...at(tokyo), 'https://d.example/', 'D'),
  ];

  it('queries, every page once, one support per cited span with UTF-8 byte offsets that cut its text out', () => {
    const g = groundingMetadataOf(text, searches, annotations)!;
    expect(g.webSearchQueries).toEqual(['cafe prices', 'ginza store']);
    expect(g.groundingChunks).toEqual([
      { web: { uri: 'https://a.example/cafe', title: 'Cafe news' } },
      { web: { uri: 'https://b.example/' } },
      { web: { uri: 'https://c.example/ginza', title: 'Ginza' } },
      { web: { uri: 'https://d.example/', title: 'D' } },
    ]);
    expect(g.groundingSupports?.map((s) => s.groundingChunkIndices)).toEqual([
      [0, 1],
      [2, 3],
    ]);
    const bytes = Buffer.from(text, 'utf8');
    for (const { segment } of g.groundingSupports!) {
      expect(bytes.subarray(segment!.startIndex ?? 0, segment!.endIndex).toString('utf8')).toBe(segment!.text);
    }
    expect(g.groundingSupports!.map((s) => s.segment!.text)).toEqual([cafe, tokyo]);
    // A segment at the text's start leaves its zero out, as proto3 JSON does; no partIndex for part 0.
    expect(g.groundingSupports![0].segment).toEqual({ endIndex: Buffer.byteLength(cafe), text: cafe });
  });

  it("reads back through the gemini provider's grounding parser to the same citations", () => {
    const g = groundingMetadataOf(text, searches, annotations)!;
    const back = groundingOf(g, text, (n) => `ws_${n}`)!;
    expect(back.annotations).toEqual(annotations.map((a) => ({ ...a, url_citation: { ...a.url_citation } })));
    expect(back.searches.map((s) => s.query)).toEqual(['cafe prices', 'ginza store']);
  });

  it('names the text part when a thought part is before it; nothing when nothing was searched', () => {
    expect(groundingMetadataOf(text, searches, annotations, 1)!.groundingSupports![0].segment!.partIndex).toBe(1);
    expect(groundingMetadataOf(text, [], [])).toBeUndefined();
    expect(groundingMetadataOf(text, undefined, undefined)).toBeUndefined();
  });

  it('a search that found nothing cited still says its query; a failed one too', () => {
    expect(groundingMetadataOf('No results.', [{ id: 's', query: 'q', status: 'failed', error: 'max_uses_exceeded', sources: [] }], undefined)).toEqual({ webSearchQueries: ['q'] });
  });
});
