/**
 * The gateway's web search extension (translate/chat/web-search.ts) ↔ Gemini's Grounding with
 * Google Search (https://ai.google.dev/gemini-api/docs/google-search).
 *
 *   request  `web_search`           a `googleSearch` tool (`{googleSearch: {}}`) beside the
 *                                   function declarations. It has no domain lists, no use limit
 *                                   and no named location: those settings are reported dropped.
 *                                   Gemini 2.x refuses Google Search and function declarations
 *                                   in one request ("Tool use with function calling is
 *                                   unsupported"): there the search is reported dropped and the
 *                                   client's functions kept
 *   answer   groundingMetadata      `webSearchQueries` → one `web_search_calls` entry per query
 *                                   (every one with the grounding pages as its sources; Gemini does
 *                                   not say which query found which page); `groundingSupports` →
 *                                   a url_citation per cited chunk over the supported segment.
 *                                   Segment offsets are UTF-8 bytes into the candidate's text,
 *                                   made string indices here; a segment whose bytes do not hold
 *                                   its `text` is looked up by that text instead
 *            usage                  the number of queries as `server_tool_use.web_search_requests`
 */
import type { UrlCitation, WebSearchCall } from '../../openai-types.ts';
import type { ProviderCall } from '../../plugin-api.ts';
import { reportWebSearchLeftOut, reportWebSearchSetting, urlCitation, utf16IndexOfByte, webSearchOf } from '../chat/web-search.ts';
import { generationOf } from './model.ts';

/** Where a grounding support is in the answer: UTF-8 byte offsets (into the part `partIndex`, 0 when left out). */
export interface GroundingSegment {
  partIndex?: number;
  startIndex?: number;
  endIndex?: number;
  text?: string;
}

export interface GroundingMetadata {
  webSearchQueries?: string[];
  groundingChunks?: Array<{ web?: { uri?: string; title?: string; domain?: string } }>;
  groundingSupports?: Array<{ segment?: GroundingSegment; groundingChunkIndices?: number[] }>;
  [extra: string]: unknown;
}

/** The googleSearch tool when the request asks for search (and the model can have it), its settings Gemini has no place for reported. */
export function googleSearchOf(call: ProviderCall, withFunctions: boolean): Record<string, unknown> | undefined {
  if (!webSearchOf(call)) return undefined;
  const generation = generationOf(call.model);
  if (withFunctions && generation !== undefined && generation < 3) {
    reportWebSearchLeftOut(call, `gemini model ${call.model} cannot take Google Search and function declarations in one request`);
    return undefined;
  }
  const reason = 'Gemini\u2019s Google Search grounding has no such setting; the search runs without it';
  for (const setting of ['max_uses', 'allowed_domains', 'blocked_domains', 'user_location'] as const) reportWebSearchSetting(call, setting, reason);
  return { googleSearch: {} };
}

export interface Grounding {
  searches: WebSearchCall[];
  annotations: UrlCitation[];
}

/** The searches and citations of a candidate's grounding, over its whole text; undefined when it has none. */
export function groundingOf(metadata: GroundingMetadata | undefined, text: string, idOf: (n: number) => string): Grounding | undefined {
  if (!metadata || typeof metadata !== 'object') return undefined;
  const pages: Array<{ url: string; title?: string }> = [];
  for (const chunk of metadata.groundingChunks ?? []) {
    const uri = chunk?.web?.uri;
    if (typeof uri === 'string') pages.push(typeof chunk.web?.title === 'string' ? { url: uri, title: chunk.web.title } : { url: uri });
  }
  const queries = (metadata.webSearchQueries ?? []).filter((q) => typeof q === 'string');
  if (!queries.length && !pages.length) return undefined;
  const searches: WebSearchCall[] = (queries.length ? queries : [undefined]).map((query, n) => {
    const search: WebSearchCall = { id: idOf(n), sources: pages, status: 'completed' };
    if (query !== undefined) search.query = query;
    return search;
  });
  const annotations: UrlCitation[] = [];
  for (const support of metadata.groundingSupports ?? []) {
    const span = spanOf(support.segment, text);
    if (!span) continue;
    for (const i of support.groundingChunkIndices ?? []) {
      const page = pages[i];
      if (page) annotations.push(urlCitation(span.start, span.end, page.url, page.title));
    }
  }
  return { searches, annotations };
}

function spanOf(segment: GroundingSegment | undefined, text: string): { start: number; end: number } | undefined {
  if (!segment || typeof segment.endIndex !== 'number') return undefined;
  const start = utf16IndexOfByte(text, segment.startIndex ?? 0);
  const end = utf16IndexOfByte(text, segment.endIndex);
  const said = segment.text;
  if (typeof said !== 'string' || text.slice(start, end) === said) return end > start ? { start, end } : undefined;
  const found = text.indexOf(said);
  return found >= 0 && said ? { start: found, end: found + said.length } : undefined;
}
