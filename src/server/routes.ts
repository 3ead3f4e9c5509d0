/** The HTTP surface: which paths exist and with which methods (for OpenAI-shaped 404 vs 405). */
export const CHAT_PATHS = ['/v1/chat/completions', '/chat/completions'] as const;
export const MODELS_PATHS = ['/v1/models', '/models'] as const;

const KNOWN: Array<[RegExp, string]> = [
  [/^\/(v1\/)?chat\/completions\/?$/, 'POST'],
  [/^\/(v1\/)?models(\/[^/]+)?\/?$/, 'GET'],
  [/^\/healthz\/?$/, 'GET'],
  [/^\/readyz\/?$/, 'GET'],
];

/** The allowed method when the path exists, else undefined. */
export function allowedMethod(url: string): string | undefined {
  const path = url.split('?')[0];
  for (const [pattern, method] of KNOWN) if (pattern.test(path)) return method;
  return undefined;
}
