/** Gemini's groundingMetadata → the gateway's web_search_calls and url_citation annotations. */
import { describe, expect, it } from 'vitest';
import { utf16IndexOfByte } from '../chat/web-search.ts';
import { groundingOf } from './grounding.ts';

const idOf = (n: number) => `ws_${n}`;

describe('groundingOf', () => {
  const text = 'Caf\u00e9 \u{1F600} opened. It serves tea.';
  const bytes = (s: string) => Buffer.byteLength(s);

  it('UTF-8 byte offsets become string indices, past multi-byte characters and surrogate pairs', () => {
    const second = 'It serves tea.';
    const start = bytes(text.slice(0, text.indexOf(second)));
    expect(utf16IndexOfByte(text, start)).toBe(text.indexOf(second));
    const grounding = groundingOf(
      {
        webSearchQueries: ['cafe'],
        groundingChunks: [{ web: { uri: 'https://a.example', title: 'a.example' } }, { web: { uri: 'https://b.example' } }],
        groundingSupports: [{ segment: { startIndex: start, endIndex: start + bytes(second), text: second }, groundingChunkIndices: [0, 1, 7] }],
      },
      text,
      idOf,
    )!;
    expect(grounding.searches).toEqual([{ id: 'ws_0', query: 'cafe', sources: [{ url: 'https://a.example', title: 'a.example' }, { url: 'https://b.example' }], status: 'completed' }]);
    // A chunk index with no chunk behind it is left out; a chunk without a title is titled by its URL.
    expect(grounding.annotations.map((a) => [a.url_citation.url, a.url_citation.title, text.slice(a.url_citation.start_index, a.url_citation.end_index)])).toEqual([
      ['https://a.example', 'a.example', second],
      ['https://b.example', 'https://b.example', second],
    ]);
  });

  it('a segment whose bytes do not hold its text is found by its text; one found nowhere is left out', () => {
    const grounding = groundingOf(
      {
        groundingChunks: [{ web: { uri: 'https://a.example', title: 'A' } }],
        groundingSupports: [
          { segment: { startIndex: 0, endIndex: 4, text: 'opened' }, groundingChunkIndices: [0] },
          { segment: { startIndex: 0, endIndex: 4, text: 'not in the text' }, groundingChunkIndices: [0] },
        ],
      },
      text,
      idOf,
    )!;
    // No queries: one search stands for the grounding, with no query.
    expect(grounding.searches).toEqual([{ id: 'ws_0', sources: [{ url: 'https://a.example', title: 'A' }], status: 'completed' }]);
    expect(grounding.annotations.map((a) => text.slice(a.url_citation.start_index, a.url_citation.end_index))).toEqual(['opened']);
  });

  it('no metadata, or metadata with neither queries nor pages, is no search', () => {
    expect(groundingOf(undefined, text, idOf)).toBeUndefined();
    expect(groundingOf({ searchEntryPoint: { renderedContent: '<div/>' } }, text, idOf)).toBeUndefined();
  });
});
