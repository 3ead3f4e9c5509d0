/**
 * Grounding with Google Search (https://ai.google.dev/gemini-api/docs/google-search) on a
 * translated target: the gateway's web search extension (translate/chat/web-search.ts), the same
 * one a Responses `web_search` tool or a Messages `web_search_2025…` tool becomes.
 *
 *   request  tools[i].googleSearch          `web_search`: Anthropic's server web search on an
 *            tools[i].googleSearchRetrieval  anthropic target; reported dropped (400 when strict)
 *                                           where the target has none (chat servers, Bedrock).
 *                                           `excludeDomains` → `blocked_domains`; every other
 *                                           setting (timeRangeFilter, dynamicRetrievalConfig, ...)
 *                                           is reported dropped: the target's search has no such knob
 *   answer   web_search_calls                groundingMetadata.webSearchQueries (their queries) and
 *                                           groundingChunks (every page found, then any cited page
 *                                           not among them, each once: `web {uri, title}`)
 *            annotations (url_citation)      groundingSupports: one per cited span, its
 *                                           `groundingChunkIndices` the pages citing it; segment
 *                                           offsets are UTF-8 bytes (chat's are UTF-16 units) into
 *                                           the candidate's answer text, with that text as `text`
 *
 * Google's `searchEntryPoint` (its rendered search chips) has no equivalent and is left out.
 */
import type { UrlCitation, WebSearchCall, WebSearchRequest } from '../../openai-types.ts';
import type { GroundingMetadata, GroundingSegment } from '../../translate/gemini/grounding.ts';
import type { Drops } from './drops.ts';
import { arrayAt, objectAt, stringAt } from './fields.ts';

/** The tool keys that ask for Google Search (`googleSearchRetrieval` is Gemini 1.5's). */
export const SEARCH_TOOLS: ReadonlySet<string> = new Set(['googleSearch', 'googleSearchRetrieval']);

const NO_SUCH_SETTING = 'the target\u2019s web search has no such setting; the search runs without it';

/**
 * The web search a `googleSearch` / `googleSearchRetrieval` tool asks for; `at` is the tool's
 * place (`tools[1]`). Its settings with no web_search form are reported in `drops`.
 */
export function webSearchOfTool(key: string, value: unknown, at: string, drops: Drops): WebSearchRequest {
  const param = `${at}.${key}`;
  const tool = objectAt(value, param);
  const search: WebSearchRequest = { field: at, what: key };
  for (const [name, setting] of Object.entries(tool)) {
    if (setting == null) continue;
    if (key === 'googleSearch' && name === 'excludeDomains') {
      const domains = arrayAt(setting, `${param}.excludeDomains`)
        .map((d, i) => stringAt(d, `${param}.excludeDomains[${i}]`))
        .filter((d) => d);
      if (domains.length) search.blocked_domains = domains;
    } else drops.add(`${param}.${name}`, NO_SUCH_SETTING);
  }
  return search;
}

/**
 * A candidate's groundingMetadata from what its chat answer says the search did; undefined when it
 * did not search. `text` is the answer's text the citations' offsets count in; `partIndex` the
 * text part those offsets belong to (0, the default, is left out as proto3 JSON does).
 */
export function groundingMetadataOf(text: string, searches: readonly WebSearchCall[] | undefined, annotations: readonly UrlCitation[] | undefined, partIndex = 0): GroundingMetadata | undefined {
  const citations = (annotations ?? []).filter((a) => a?.type === 'url_citation' && typeof a.url_citation?.url === 'string');
  if (!searches?.length && !citations.length) return undefined;
  const metadata: GroundingMetadata = {};
  const queries = (searches ?? []).flatMap((s) => (typeof s.query === 'string' ? [s.query] : []));
  if (queries.length) metadata.webSearchQueries = queries;
  const chunks: NonNullable<GroundingMetadata['groundingChunks']> = [];
  const chunkOf = new Map<string, number>();
  const page = (url: string, title: string | undefined): number => {
    let index = chunkOf.get(url);
    if (index === undefined) {
      index = chunks.push({ web: title ? { uri: url, title } : { uri: url } }) - 1;
      chunkOf.set(url, index);
    }
    return index;
  };
  for (const search of searches ?? []) for (const source of search.sources ?? []) if (typeof source?.url === 'string') page(source.url, source.title);
  const supports: NonNullable<GroundingMetadata['groundingSupports']> = [];
  const supportOf = new Map<string, number[]>();
  for (const { url_citation: c } of citations) {
    const index = page(c.url, c.title);
    const start = Math.max(0, Math.min(c.start_index, text.length));
    const end = Math.max(start, Math.min(c.end_index, text.length));
    if (end === start) continue;
    const key = `${start}:${end}`;
    const indices = supportOf.get(key);
    if (indices) {
      if (!indices.includes(index)) indices.push(index);
      continue;
    }
    const segment: GroundingSegment = {};
    if (partIndex) segment.partIndex = partIndex;
    const startByte = byteOffset(text, start);
    // Proto3 JSON leaves a zero out, as Gemini does for a segment at the text's start.
    if (startByte) segment.startIndex = startByte;
    segment.endIndex = byteOffset(text, end);
    segment.text = text.slice(start, end);
    const chunkIndices = [index];
    supportOf.set(key, chunkIndices);
    supports.push({ segment, groundingChunkIndices: chunkIndices });
  }
  if (chunks.length) metadata.groundingChunks = chunks;
  if (supports.length) metadata.groundingSupports = supports;
  return metadata;
}

/** The UTF-8 byte offset of the string index `index` of `text`. */
function byteOffset(text: string, index: number): number {
  return Buffer.byteLength(text.slice(0, index), 'utf8');
}
