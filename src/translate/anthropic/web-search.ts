/**
 * The gateway's web search extension (translate/chat/web-search.ts) ↔ Anthropic's server web
 * search tool (https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/web-search-tool).
 *
 *   request  `web_search`            a `web_search_20250305` tool named `web_search`, with
 *                                    max_uses, allowed_domains / blocked_domains and an
 *                                    approximate user_location as the client set them
 *   answer   server_tool_use         + its web_search_tool_result: one `web_search_calls` entry
 *                                    (the query from the tool's input, the result pages as sources;
 *                                    a result error → status failed, its error_code)
 *            text `citations`        web_search_result_location → a url_citation over the whole
 *                                    text block it is on (Claude cites a block, not a span)
 *            usage.server_tool_use   carried as it is (web_search_requests)
 */
import type { WebSearchCall } from '../../openai-types.ts';
import type { ProviderCall } from '../../plugin-api.ts';
import { reportDrop } from '../../providers/drops.ts';
import { webSearchOf, webSearchSite } from '../chat/web-search.ts';
import type { AnthropicCitation, AnthropicContentBlock } from './native.ts';

export const SEARCH_TOOL_NAME = 'web_search';

/** The server tool the request's `web_search` is, or undefined (none asked, or a function tool already has its name). */
export function searchToolOf(call: ProviderCall, functionNames: readonly string[]): Record<string, unknown> | undefined {
  const search = webSearchOf(call);
  if (!search) return undefined;
  if (functionNames.includes(SEARCH_TOOL_NAME)) {
    reportDrop(call, { ...webSearchSite(search), reason: `a function tool is already named ${SEARCH_TOOL_NAME}, the name Anthropic's search tool must have` });
    return undefined;
  }
  const tool: Record<string, unknown> = { type: 'web_search_20250305', name: SEARCH_TOOL_NAME };
  if (search.max_uses !== undefined) tool.max_uses = search.max_uses;
  // Anthropic takes one list or the other, never both: the allowed list says more.
  if (search.allowed_domains?.length) tool.allowed_domains = search.allowed_domains;
  else if (search.blocked_domains?.length) tool.blocked_domains = search.blocked_domains;
  if (search.allowed_domains?.length && search.blocked_domains?.length) {
    const site = webSearchSite(search);
    reportDrop(call, { field: site.field, what: `${site.what} blocked_domains`, reason: 'Anthropic takes allowed_domains or blocked_domains, not both' });
  }
  const where = search.user_location;
  if (where && Object.values(where).some((v) => v)) tool.user_location = { type: 'approximate', ...where };
  return tool;
}

/** The search a server_tool_use block and its result make; undefined for another server tool. */
export function searchCallOf(
  use: Extract<AnthropicContentBlock, { type: 'server_tool_use' }>,
  result: Extract<AnthropicContentBlock, { type: 'web_search_tool_result' }> | undefined,
): WebSearchCall | undefined {
  if (use.name !== SEARCH_TOOL_NAME) return undefined;
  const call: WebSearchCall = { id: use.id ?? '', sources: [], status: 'completed' };
  const query = (use.input as { query?: unknown } | undefined)?.query;
  if (typeof query === 'string') call.query = query;
  const content = result?.content;
  if (Array.isArray(content)) {
    for (const page of content) if (page.type === 'web_search_result' && typeof page.url === 'string') call.sources.push(page.title ? { url: page.url, title: page.title } : { url: page.url });
  } else if (content && typeof content === 'object') {
    call.status = 'failed';
    if (typeof content.error_code === 'string') call.error = content.error_code;
  }
  return call;
}

/** The web pages a text block's citations name (other citation kinds, such as document locations, have no URL). */
export function citedPages(citations: readonly (AnthropicCitation | undefined)[] | null | undefined): Array<{ url: string; title?: string }> {
  const pages: Array<{ url: string; title?: string }> = [];
  for (const c of citations ?? []) {
    if (c?.type !== 'web_search_result_location' || typeof c.url !== 'string') continue;
    if (pages.some((p) => p.url === c.url)) continue;
    pages.push(typeof c.title === 'string' ? { url: c.url, title: c.title } : { url: c.url });
  }
  return pages;
}
