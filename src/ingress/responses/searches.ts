/**
 * The gateway's web search answer (translate/chat/web-search.ts) → Responses items: a search is a
 * `web_search_call` item (status completed or failed, action `search` with its query; the pages
 * it found as `action.sources` when the request's `include` names `web_search_call.action.sources`,
 * as OpenAI answers), and a chat `url_citation` is an output_text `url_citation` annotation, its
 * offsets made relative to the text part it lands in.
 */
import type { UrlCitation, WebSearchCall } from '../../openai-types.ts';
import type { UrlCitationAnnotation, WebSearchCallItem } from './types.ts';

export const SOURCES = 'web_search_call.action.sources';

export function searchItemOf(search: WebSearchCall, id: string, include: readonly string[]): WebSearchCallItem {
  const action: WebSearchCallItem['action'] = { type: 'search' };
  if (search.query !== undefined) {
    action.query = search.query;
    action.queries = [search.query];
  }
  if (include.includes(SOURCES)) action.sources = search.sources.map((s) => ({ type: 'url', url: s.url }));
  return { type: 'web_search_call', id, status: search.status === 'failed' ? 'failed' : 'completed', action };
}

/** A chat citation as an annotation of a text part that starts `base` characters into the chat content, clamped to the part's `length`. */
export function annotationOf(citation: UrlCitation, base: number, length: number): UrlCitationAnnotation | undefined {
  const c = citation?.url_citation;
  if (!c || typeof c.url !== 'string') return undefined;
  const start = Math.max(0, Math.min(length, c.start_index - base));
  const end = Math.max(start, Math.min(length, c.end_index - base));
  return { type: 'url_citation', start_index: start, end_index: end, url: c.url, title: typeof c.title === 'string' ? c.title : c.url };
}
