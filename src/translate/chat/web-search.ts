/**
 * The gateway's web search extension on the chat model (openai-types.ts): a request's
 * `web_search` (the client asked for its provider's own search), and an answer's
 * `web_search_calls` (the searches that ran) with `annotations` (OpenAI's `url_citation`s into the
 * text). A translation whose target searches maps them both ways (Anthropic's server tool, Gemini's
 * Google Search grounding); one whose target cannot reports the request dropped (refused when
 * strict), so a client never believes its answer was searched when it was not.
 */
import type { UrlCitation, WebSearchRequest } from '../../openai-types.ts';
import type { ProviderCall } from '../../plugin-api.ts';
import { reportDrop } from '../../providers/drops.ts';

/**
 * The request's `web_search`, its shape checked: the ingresses build it, but a chat client may send
 * the extension itself, so a value of the wrong type is left out rather than sent upstream.
 * Undefined when there is none (or it is not an object).
 */
export function webSearchOf(call: ProviderCall): WebSearchRequest | undefined {
  const raw = call.request.web_search as unknown;
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return undefined;
  const r = raw as Record<string, unknown>;
  const out: WebSearchRequest = {};
  if (typeof r.field === 'string') out.field = r.field;
  if (typeof r.what === 'string') out.what = r.what;
  if (Number.isInteger(r.max_uses) && (r.max_uses as number) > 0) out.max_uses = r.max_uses as number;
  for (const key of ['allowed_domains', 'blocked_domains'] as const) {
    const list = Array.isArray(r[key]) ? (r[key] as unknown[]).filter((d): d is string => typeof d === 'string' && d !== '') : [];
    if (list.length) out[key] = list;
  }
  const where = r.user_location;
  if (where && typeof where === 'object' && !Array.isArray(where)) {
    const location: NonNullable<WebSearchRequest['user_location']> = {};
    for (const key of ['city', 'region', 'country', 'timezone'] as const) {
      const value = (where as Record<string, unknown>)[key];
      if (typeof value === 'string' && value) location[key] = value;
    }
    if (Object.keys(location).length) out.user_location = location;
  }
  return out;
}

/** Where the request asked for search, and what it called it, for a report. */
export function webSearchSite(search: WebSearchRequest): { field: string; what: string } {
  return { field: search.field ?? 'web_search', what: search.what ?? 'web_search' };
}

/** Reports the search request left out (a target with no search of its own). */
export function reportWebSearchLeftOut(call: ProviderCall, reason: string): void {
  const search = webSearchOf(call);
  if (search) reportDrop(call, { ...webSearchSite(search), reason });
}

/** Reports one setting of the search a target runs without (its search has no such knob). */
export function reportWebSearchSetting(call: ProviderCall, setting: keyof WebSearchRequest, reason: string): void {
  const search = webSearchOf(call);
  if (search?.[setting] === undefined) return;
  const site = webSearchSite(search);
  reportDrop(call, { field: site.field, what: `${site.what} ${setting}`, reason });
}

export function urlCitation(start: number, end: number, url: string, title: string | undefined): UrlCitation {
  return { type: 'url_citation', url_citation: { start_index: start, end_index: end, url, title: title ?? url } };
}

/**
 * A UTF-8 byte offset into `text` (Gemini's segment offsets) → the JavaScript string index
 * (UTF-16) at that byte; the end of the text when the offset is past it.
 */
export function utf16IndexOfByte(text: string, byte: number): number {
  let bytes = 0;
  let i = 0;
  while (i < text.length && bytes < byte) {
    const code = text.codePointAt(i)!;
    bytes += code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
    i += code >= 0x10000 ? 2 : 1;
  }
  return i;
}
