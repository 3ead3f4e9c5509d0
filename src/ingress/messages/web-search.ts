/**
 * Anthropic's web search server tool on a translated target (a Messages client on Gemini, say):
 *
 *   tools[i] web_search_2025…     the gateway's `web_search` extension (max_uses, allowed and
 *                                 blocked domains, user_location as sent): the target's own search
 *                                 where it has one (Gemini's Google Search), else reported dropped
 *   web_search_calls (answer)     a server_tool_use block (`web_search`, the query as its input) and
 *                                 a web_search_tool_result block with the pages found, ahead of
 *                                 the text, as Anthropic answers; the pages carry no
 *                                 `encrypted_content` (there is none but Anthropic's): ''
 *   annotations (answer)          the text cut into blocks at the cited spans, each cited block
 *                                 with its `web_search_result_location` citations
 *   past server_tool_use (web_search) and web_search_tool_result blocks in an assistant turn:
 *                                 skipped on a translated target, the record of a search already
 *                                 run, whose findings the answer's text holds
 */
import type { UrlCitation, WebSearchCall, WebSearchRequest } from '../../openai-types.ts';
import { type Json, invalid } from './fields.ts';
import type { ContentBlock, TextBlock, WebSearchCitation } from './types.ts';

/** Anthropic's web search tool by its dated type names. */
export const WEB_SEARCH_TOOL = /^web_search_\d{8}$/;

/** The chat extension a web search tool asks for. */
export function webSearchOf(tool: Json, param: string): WebSearchRequest {
  const search: WebSearchRequest = { field: param, what: String(tool.type) };
  if (tool.max_uses != null) {
    if (!Number.isInteger(tool.max_uses) || (tool.max_uses as number) < 1) throw invalid(`${param}.max_uses`, 'expected a positive integer');
    search.max_uses = tool.max_uses as number;
  }
  for (const key of ['allowed_domains', 'blocked_domains'] as const) {
    const list = tool[key];
    if (list == null) continue;
    if (!Array.isArray(list) || list.some((d) => typeof d !== 'string')) throw invalid(`${param}.${key}`, 'expected an array of strings');
    if (list.length) search[key] = list as string[];
  }
  const where = tool.user_location;
  if (where && typeof where === 'object' && !Array.isArray(where)) {
    const location: NonNullable<WebSearchRequest['user_location']> = {};
    for (const key of ['city', 'region', 'country', 'timezone'] as const) {
      const value = (where as Json)[key];
      if (typeof value === 'string' && value) location[key] = value;
    }
    if (Object.keys(location).length) search.user_location = location;
  }
  return search;
}

/** A past block of a search already run, which a translated target does without. */
export function isPastSearchBlock(block: Json): boolean {
  return (block.type === 'server_tool_use' && block.name === 'web_search') || block.type === 'web_search_tool_result';
}

/** One search as the two blocks Anthropic answers it with. */
export function searchBlocks(search: WebSearchCall): ContentBlock[] {
  const input: Record<string, unknown> = search.query === undefined ? {} : { query: search.query };
  return [
    { type: 'server_tool_use', id: search.id, name: 'web_search', input },
    {
      type: 'web_search_tool_result',
      tool_use_id: search.id,
      content:
        search.status === 'failed'
          ? { type: 'web_search_tool_result_error', error_code: search.error ?? 'unavailable' }
          : search.sources.map((s) => ({ type: 'web_search_result', url: s.url, title: s.title ?? s.url, encrypted_content: '', page_age: null })),
    },
  ];
}

export function citationOf(annotation: UrlCitation, text: string): WebSearchCitation | undefined {
  const c = annotation?.url_citation;
  if (!c || typeof c.url !== 'string') return undefined;
  return { type: 'web_search_result_location', url: c.url, title: c.title ?? c.url, cited_text: text.slice(c.start_index, c.end_index), encrypted_index: '' };
}

/**
 * The text as blocks, cut at the cited spans (Claude cites a block, not a span): the spans that
 * cite the same text share a block; a span that overlaps an earlier one is left out.
 */
export function citedTextBlocks(text: string, annotations: readonly UrlCitation[] | undefined): TextBlock[] {
  const spans = (annotations ?? []).filter((a) => a?.url_citation && a.url_citation.end_index > a.url_citation.start_index).sort((a, b) => a.url_citation.start_index - b.url_citation.start_index);
  if (!spans.length) return text ? [{ type: 'text', text }] : [];
  const blocks: TextBlock[] = [];
  let at = 0;
  let last: { start: number; end: number; block: TextBlock } | undefined;
  for (const span of spans) {
    const { start_index: start, end_index: end } = span.url_citation;
    const citation = citationOf(span, text);
    if (!citation || end > text.length) continue;
    if (last && start === last.start && end === last.end) {
      last.block.citations!.push(citation);
      continue;
    }
    if (start < at) continue;
    if (start > at) blocks.push({ type: 'text', text: text.slice(at, start) });
    const block: TextBlock = { type: 'text', text: text.slice(start, end), citations: [citation] };
    blocks.push(block);
    last = { start, end, block };
    at = end;
  }
  if (at < text.length) blocks.push({ type: 'text', text: text.slice(at) });
  return blocks;
}
