import type { UpstreamFailure } from '../plugin-api.ts';

/**
 * Reads the OpenAI error envelope, as OpenAI and most compatible servers send it. Tolerates the
 * variants real servers send: numeric `code` (OpenRouter), missing `param` (Groq), `type: null`
 * (Azure), a bare string body (proxies in front of vLLM/Ollama).
 */
export function openAiStyleFailure(status: number, body: unknown): UpstreamFailure {
  if (body && typeof body === 'object') {
    const error = (body as { error?: unknown }).error;
    if (error && typeof error === 'object') {
      const e = error as Record<string, unknown>;
      const message = typeof e.message === 'string' && e.message ? e.message : `HTTP ${status}`;
      const code = e.code ?? e.type;
      return {
        message,
        code: code === null || code === undefined ? null : String(code),
        param: typeof e.param === 'string' ? e.param : null,
      };
    }
    if (typeof error === 'string') return { message: error };
    const detail = (body as { detail?: unknown; message?: unknown }).detail ?? (body as { message?: unknown }).message;
    if (typeof detail === 'string') return { message: detail };
  }
  if (typeof body === 'string' && body.trim()) return { message: body.trim().slice(0, 500) };
  return { message: `HTTP ${status} with no error message` };
}
