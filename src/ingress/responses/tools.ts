/**
 * Responses tools → chat function tools, and a call's chat name → the tool the client named.
 * Chat knows one kind of tool, a function with JSON arguments, in one flat list:
 *
 *   function                  a function of the same name
 *   custom (freeform)         a function with one string argument, `input`; the description says
 *                             the input is free text, and gives the grammar (Lark or a regex)
 *                             when the tool has one (chat cannot constrain it, the model is told);
 *                             its calls come back as `custom_tool_call` items, `input` the string
 *   namespace                 each of its tools as a function named `<namespace>__<name>`, the
 *                             namespace's description leading each one's; their calls come back
 *                             with the bare `name` and the `namespace`, as OpenAI answers them.
 *                             `functions` is OpenAI's default namespace (top-level tools live in
 *                             it, and OpenAI answers their calls without one): its tools keep
 *                             their bare names
 *   defer_loading             ignored: a deferred tool sent in the request is offered at once
 *   tool_search, execution    a function `tool_search` with the tool's parameters; its calls come
 *   client                    back as `tool_search_call` items (arguments as an object), and the
 *                             tools of the client's `tool_search_output` are read as tools (input.ts)
 *   web_search, web_search_preview   the gateway's `web_search` extension (translate/chat/web-search.ts):
 *   (and dated names)        the target's own search where it has one (Anthropic's server tool,
 *                            Gemini's Google Search grounding), else reported dropped there;
 *                            `filters.allowed_domains` and `user_location` go with it,
 *                            `search_context_size` is reported (no target has the knob), and
 *                            `external_web_access: false` (cached results only, Codex's default)
 *                            drops the tool, reported: no target's search is offline
 *   other hosted tools (file_search, code_interpreter, image_generation, computer, mcp,
 *   server tool_search...), tools whose calls are items of their own (local_shell, shell,
 *   apply_patch), and types not known
 *                             dropped and reported: they run on OpenAI's platform or need items
 *                             chat cannot produce
 *
 * Names. Providers take function names of at most 64 characters of [a-zA-Z0-9_-] (OpenAI; Anthropic
 * allows 128, Gemini 64). A name that is not one (too long, or a dot in a namespace) is cut to 55
 * characters, its other characters made `_`, and ends in `_` and 8 hex digits of a SHA-256 of the
 * namespace and name; so does the second of two tools that would share a name. The mapping back
 * never parses a name: each request's table (`Callable`) says which tool a chat name is, and a
 * past call in `input` is named the same way from its namespace and name.
 */
import { createHash } from 'node:crypto';
import type { Drop } from '../../contract/dropped.ts';
import type { FunctionTool, WebSearchRequest } from '../../openai-types.ts';
import { invalidParam } from './errors.ts';
import type { Callable, CustomFormat, ResponsesCustomTool, ResponsesFunctionTool, ResponsesNamespaceTool, ResponsesTool, ResponsesToolSearchTool, ResponsesWebSearchTool } from './types.ts';

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** OpenAI's default namespace: the one top-level function and custom tools belong to. */
export const DEFAULT_NAMESPACE = 'functions';

/** The one argument a custom tool's chat function takes. */
export const CUSTOM_INPUT = 'input';

/** The chat function client-executed tool search becomes. */
export const TOOL_SEARCH = 'tool_search';

/** OpenAI's web search tool, by every name it has had. */
const WEB_SEARCH = new Set(['web_search', 'web_search_2025_08_26', 'web_search_preview', 'web_search_preview_2025_03_11']);

/** Tools OpenAI runs on its side, or whose calls are items chat has no way to produce. */
const PLATFORM_TOOLS = new Set([
  'web_search',
  'web_search_2025_08_26',
  'web_search_preview',
  'web_search_preview_2025_03_11',
  'file_search',
  'code_interpreter',
  'image_generation',
  'computer',
  'computer_use',
  'computer_use_preview',
  'mcp',
  'tool_search',
  'programmatic_tool_calling',
  'local_shell',
  'shell',
  'apply_patch',
]);

/** The tools of one request as they are read: what is carried, how it is named for chat, what is dropped. */
export class ToolReading {
  readonly tools: ResponsesTool[] = [];
  readonly callables: Callable[] = [];
  readonly drops: Drop[] = [];
  /** The web search asked for, as the chat extension carries it. */
  webSearch: WebSearchRequest | undefined;

  /** Reads one `tools` list (the request's, or an `additional_tools` item's); `param` is where it is. */
  read(list: unknown, param: string): void {
    if (list == null) return;
    if (!Array.isArray(list)) throw invalidParam(param, 'expected an array');
    list.forEach((tool, i) => {
      const at = `${param}[${i}]`;
      if (!isObject(tool)) throw invalidParam(at, 'expected an object');
      if (tool.type === 'function' || tool.type === 'custom') {
        const read = tool.type === 'function' ? functionToolOf(tool, at) : customToolOf(tool, at);
        this.tools.push(read);
        this.#add(read, undefined, '');
      } else if (tool.type === 'namespace') {
        const namespace = namespaceToolOf(tool, at, this.drops);
        this.tools.push(namespace);
        for (const inner of namespace.tools) this.#add(inner, namespace.name, namespace.description);
      } else if (tool.type === 'tool_search' && tool.execution === 'client') {
        const search = toolSearchOf(tool, at);
        this.tools.push(search);
        this.#add(search, undefined, '');
      } else if (typeof tool.type === 'string' && WEB_SEARCH.has(tool.type)) {
        this.#webSearchTool(tool, at);
      } else {
        this.drops.push(platformToolDrop(tool.type, at));
      }
    });
  }

  #webSearchTool(tool: Json, at: string): void {
    const what = tool.type as ResponsesWebSearchTool['type'];
    if (tool.external_web_access === false) {
      this.drops.push({ field: at, what, reason: "it asks for cached results only (external_web_access: false), and the target's own search goes to the live web" });
      return;
    }
    if (this.webSearch) {
      this.drops.push({ field: at, what, reason: 'web search is already asked for by an earlier tool' });
      return;
    }
    const search: WebSearchRequest = { field: at, what };
    const echo: ResponsesWebSearchTool = { type: what };
    if (tool.filters != null) {
      if (!isObject(tool.filters)) throw invalidParam(`${at}.filters`, 'expected an object');
      const allowed = tool.filters.allowed_domains;
      if (allowed != null) {
        if (!Array.isArray(allowed) || allowed.some((d) => typeof d !== 'string')) throw invalidParam(`${at}.filters.allowed_domains`, 'expected an array of strings');
        if (allowed.length) search.allowed_domains = allowed as string[];
      }
      echo.filters = tool.filters;
    }
    if (tool.user_location != null) {
      if (!isObject(tool.user_location)) throw invalidParam(`${at}.user_location`, 'expected an object');
      const where: NonNullable<WebSearchRequest['user_location']> = {};
      for (const key of ['city', 'region', 'country', 'timezone'] as const) {
        const value = tool.user_location[key];
        if (value == null) continue;
        if (typeof value !== 'string') throw invalidParam(`${at}.user_location.${key}`, 'expected a string');
        where[key] = value;
      }
      if (Object.keys(where).length) search.user_location = where;
      echo.user_location = tool.user_location;
    }
    if (tool.search_context_size != null) {
      this.drops.push({ field: `${at}.search_context_size`, what: String(tool.search_context_size), reason: "no target's own web search takes a context size" });
      echo.search_context_size = tool.search_context_size;
    }
    this.webSearch = search;
    this.tools.push(echo);
  }

  #add(tool: ResponsesFunctionTool | ResponsesCustomTool | ResponsesToolSearchTool, namespace: string | undefined, lead: string): void {
    const name = tool.type === 'tool_search' ? TOOL_SEARCH : tool.name;
    const ns = namespace === DEFAULT_NAMESPACE || namespace === '' ? undefined : namespace;
    // The same tool twice (top level and in `functions`, say) is one tool: the first says what it is.
    if (this.callables.some((c) => c.name === name && c.namespace === ns && c.kind === tool.type)) return;
    let chatName = flatName(name, ns);
    if (this.callables.some((c) => c.chatName === chatName)) chatName = hashedName(name, ns);
    const fn: FunctionTool['function'] = { name: chatName };
    const own = tool.type === 'custom' ? customDescription(tool) : tool.description;
    const description = lead ? [lead, own ?? ''].filter(Boolean).join('\n\n') : own;
    if (description != null) fn.description = description;
    if (tool.type === 'custom') {
      fn.parameters = { type: 'object', properties: { [CUSTOM_INPUT]: { type: 'string' } }, required: [CUSTOM_INPUT], additionalProperties: false };
    } else {
      if (tool.parameters != null) fn.parameters = tool.parameters;
      if (tool.type === 'function' && tool.strict != null) fn.strict = tool.strict;
    }
    const callable: Callable = { chatName, kind: tool.type, name, tool: { type: 'function', function: fn } };
    if (ns !== undefined) callable.namespace = ns;
    this.callables.push(callable);
  }
}

/** The tool a chat call's function name stands for, if the request offered it. */
export function callableNamed(callables: readonly Callable[], chatName: string): Callable | undefined {
  return callables.find((c) => c.chatName === chatName);
}

/** The chat name of a tool the client names (a past call in `input`, a tool_choice). */
export function chatNameOf(callables: readonly Callable[], name: string, namespace?: string): string {
  const ns = namespace === DEFAULT_NAMESPACE || namespace === '' ? undefined : namespace;
  return callables.find((c) => c.name === name && c.namespace === ns)?.chatName ?? flatName(name, ns);
}

const NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** `name`, or `namespace__name`, when it is a name every provider takes; else its hashed form. */
export function flatName(name: string, namespace?: string): string {
  const joined = namespace === undefined ? name : `${namespace}__${name}`;
  return NAME.test(joined) ? joined : hashedName(name, namespace);
}

function hashedName(name: string, namespace?: string): string {
  const joined = namespace === undefined ? name : `${namespace}__${name}`;
  const hash = createHash('sha256')
    .update(`${namespace ?? ''}\u0000${name}`)
    .digest('hex')
    .slice(0, 8);
  return `${joined.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 55)}_${hash}`;
}

/** What the model reads of a custom tool: its description, then how to call it. */
function customDescription(tool: ResponsesCustomTool): string {
  const format = tool.format;
  let how = `Its \`${CUSTOM_INPUT}\` is free text, sent as it is (not JSON).`;
  if (format?.type === 'grammar') {
    const kind = format.syntax === 'regex' ? 'match this regular expression' : `be a sentence of this ${format.syntax} grammar`;
    how = `Its \`${CUSTOM_INPUT}\` is text that must ${kind}, sent as it is (not JSON):\n${format.definition}`;
  }
  return [tool.description ?? '', how].filter(Boolean).join('\n\n');
}

function platformToolDrop(type: unknown, field: string): Drop {
  const what = typeof type === 'string' ? type : 'tool';
  if (PLATFORM_TOOLS.has(what)) {
    return { field, what, reason: `the ${what} tool runs on OpenAI's platform (or answers with items of its own), which the translation to chat has no equivalent for` };
  }
  return { field, what, reason: `tools of type ${JSON.stringify(type)} are not known to the translation to chat` };
}

function stringOf(tool: Json, key: string, param: string, required: boolean): string | undefined {
  const value = tool[key];
  if (value == null) {
    if (required) throw invalidParam(`${param}.${key}`, 'expected a non-empty string');
    return undefined;
  }
  if (typeof value !== 'string' || (required && !value)) throw invalidParam(`${param}.${key}`, required ? 'expected a non-empty string' : 'expected a string');
  return value;
}

function functionToolOf(tool: Json, param: string): ResponsesFunctionTool {
  const out: ResponsesFunctionTool = { type: 'function', name: stringOf(tool, 'name', param, true)! };
  const description = stringOf(tool, 'description', param, false);
  if (description !== undefined) out.description = description;
  if (tool.parameters != null) {
    if (!isObject(tool.parameters)) throw invalidParam(`${param}.parameters`, 'expected a JSON Schema object');
    out.parameters = tool.parameters;
  }
  if (tool.strict != null) {
    if (typeof tool.strict !== 'boolean') throw invalidParam(`${param}.strict`, 'expected a boolean');
    out.strict = tool.strict;
  }
  return out;
}

function customToolOf(tool: Json, param: string): ResponsesCustomTool {
  const out: ResponsesCustomTool = { type: 'custom', name: stringOf(tool, 'name', param, true)! };
  const description = stringOf(tool, 'description', param, false);
  if (description !== undefined) out.description = description;
  if (tool.format != null) out.format = customFormatOf(tool.format, `${param}.format`);
  return out;
}

function customFormatOf(format: unknown, param: string): CustomFormat {
  if (!isObject(format)) throw invalidParam(param, 'expected an object');
  if (format.type === 'text') return { type: 'text' };
  if (format.type !== 'grammar') throw invalidParam(`${param}.type`, "expected 'text' or 'grammar'");
  const syntax = stringOf(format, 'syntax', param, true)!;
  const definition = stringOf(format, 'definition', param, true)!;
  return { type: 'grammar', syntax, definition };
}

function toolSearchOf(tool: Json, param: string): ResponsesToolSearchTool {
  const out: ResponsesToolSearchTool = { type: 'tool_search', execution: 'client' };
  const description = stringOf(tool, 'description', param, false);
  if (description !== undefined) out.description = description;
  if (tool.parameters != null) {
    if (!isObject(tool.parameters)) throw invalidParam(`${param}.parameters`, 'expected a JSON Schema object');
    out.parameters = tool.parameters;
  }
  return out;
}

/** A namespace and its function and custom tools; anything else inside it is dropped and reported. */
function namespaceToolOf(tool: Json, param: string, drops: Drop[]): ResponsesNamespaceTool {
  const name = stringOf(tool, 'name', param, true)!;
  const description = stringOf(tool, 'description', param, false) ?? '';
  if (!Array.isArray(tool.tools)) throw invalidParam(`${param}.tools`, 'expected an array of function and custom tools');
  const tools: ResponsesNamespaceTool['tools'] = [];
  tool.tools.forEach((inner, j) => {
    const at = `${param}.tools[${j}]`;
    if (!isObject(inner)) throw invalidParam(at, 'expected an object');
    if (inner.type === 'function') tools.push(functionToolOf(inner, at));
    else if (inner.type === 'custom') tools.push(customToolOf(inner, at));
    else drops.push(platformToolDrop(inner.type, at));
  });
  return { type: 'namespace', name, description, tools };
}
