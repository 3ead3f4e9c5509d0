/**
 * What stands behind an openai provider's `baseUrl`: OpenAI's own API, or another server that
 * speaks its wire format (vLLM, Ollama, llama.cpp, OpenRouter...). Compatible servers read
 * sampling parameters OpenAI never had (`top_k`, `min_p`, `repetition_penalty`...), so a chat
 * request's fields outside OpenAI's set go to them as the client sent them; OpenAI's own API
 * answers 400 `Unrecognized request argument supplied` to those, so for it they are dropped and
 * reported instead. Fields OpenAI may have added after this gateway still go up to both.
 */
import type { ChatCompletionRequest, ProviderCall } from 'switchyard-gateway';
import { reportDrop } from 'switchyard-gateway/kit';

/** `openai`: OpenAI's own API (api.openai.com or a proxy in front of it); `compatible`: any other server. */
export type OpenAiServer = 'openai' | 'compatible';

const OPENAI_HOST = 'api.openai.com';

/** Each options object's answer, worked out once (the options live as long as their config generation). */
const resolved = new WeakMap<object, OpenAiServer>();

/** The configured `server`, else `openai` for OpenAI's own host and `compatible` for any other. */
export function serverOf(options: { baseUrl: string; server?: OpenAiServer }): OpenAiServer {
  if (options.server) return options.server;
  let server = resolved.get(options);
  if (!server) {
    server = new URL(options.baseUrl).hostname === OPENAI_HOST ? 'openai' : 'compatible';
    resolved.set(options, server);
  }
  return server;
}

/**
 * Sampling parameters of compatible servers that OpenAI's API refuses: vLLM's and llama.cpp's
 * (https://docs.vllm.ai/en/latest/serving/openai_compatible_server.html#extra-parameters),
 * OpenRouter's `top_a`, and what the Messages and Gemini ways in carry over (`top_k` from
 * Anthropic's `top_k` and Gemini's `topK`).
 */
export const NOT_OPENAI_SAMPLING: readonly string[] = ['top_k', 'min_p', 'top_a', 'typical_p', 'repetition_penalty', 'length_penalty', 'min_tokens', 'best_of', 'use_beam_search', 'ignore_eos'];

/**
 * The body without the sampling parameters OpenAI's API refuses, each reported (a 400 naming it
 * when the request is strict); the body itself when it has none.
 */
export function withoutForeignSampling(call: ProviderCall, body: ChatCompletionRequest): ChatCompletionRequest {
  let out: ChatCompletionRequest | undefined;
  for (const field of NOT_OPENAI_SAMPLING) {
    if (body[field] === undefined || body[field] === null) continue;
    reportDrop(call, { field, what: String(body[field]), reason: `OpenAI's API takes no ${field} (server: openai)` });
    out ??= { ...body };
    delete out[field];
  }
  return out ?? body;
}
