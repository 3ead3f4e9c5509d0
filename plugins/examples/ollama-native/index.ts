/**
 * Example provider plugin: Ollama's native chat API (`POST /api/chat`), which is not the OpenAI
 * wire format: options nest under `options`, streams are newline-delimited JSON rather than
 * SSE, and usage comes as `prompt_eval_count` / `eval_count` on the final line.
 * https://github.com/ollama/ollama/blob/main/docs/api.md#generate-a-chat-completion
 *
 * It shows every part of the provider contract: options schema, request transform, response
 * transform, a stateful stream translator, a custom stream decoder and error mapping.
 */
import { defineHttpProvider, type ChatCompletion, type ChatCompletionChunk, type ChatMessage, type ProviderCall } from 'switchyard-gateway';
import { unsupportedParam } from 'switchyard-gateway/kit';

export interface OllamaOptions {
  /** Where Ollama listens, e.g. http://127.0.0.1:11434 */
  baseUrl: string;
  /** How long Ollama keeps the model loaded after a request (its `keep_alive`). */
  keepAlive?: string;
}

interface OllamaMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  images?: string[];
}

interface OllamaChatLine {
  model: string;
  created_at?: string;
  message?: { role: string; content: string };
  done: boolean;
  done_reason?: string;
  prompt_eval_count?: number;
  eval_count?: number;
  error?: string;
}

/** OpenAI messages → Ollama messages: text content flattened, data-URL images as base64. */
export function toOllamaMessages(messages: ChatMessage[], call: ProviderCall): OllamaMessage[] {
  return messages.map((m) => {
    const role = m.role === 'developer' ? 'system' : m.role === 'function' ? 'tool' : m.role;
    if (typeof m.content === 'string' || m.content == null) return { role, content: m.content ?? '' };
    const images: string[] = [];
    let content = '';
    for (const part of m.content) {
      if (part.type === 'text') content += part.text;
      else if (part.type === 'image_url' && part.image_url.url.startsWith('data:')) images.push(part.image_url.url.slice(part.image_url.url.indexOf(',') + 1));
      else unsupportedParam(call, `messages[].content[].${part.type}`, 'is not supported (only text and data: URL images)');
    }
    return images.length ? { role, content, images } : { role, content };
  });
}

export function buildChatRequest(call: ProviderCall, options: OllamaOptions): Record<string, unknown> {
  const r = call.request;
  for (const p of ['tools', 'n', 'logprobs', 'response_format'] as const) {
    if (r[p] !== undefined && r[p] !== null && !(p === 'n' && r.n === 1)) unsupportedParam(call, p);
  }
  const opts: Record<string, unknown> = {};
  if (r.temperature != null) opts.temperature = r.temperature;
  if (r.top_p != null) opts.top_p = r.top_p;
  if (r.seed != null) opts.seed = r.seed;
  const maxTokens = r.max_completion_tokens ?? r.max_tokens;
  if (maxTokens != null) opts.num_predict = maxTokens;
  if (r.stop != null) opts.stop = Array.isArray(r.stop) ? r.stop : [r.stop];
  const body: Record<string, unknown> = { model: call.model, messages: toOllamaMessages(r.messages, call), stream: call.stream };
  if (Object.keys(opts).length) body.options = opts;
  if (options.keepAlive) body.keep_alive = options.keepAlive;
  return body;
}

const finishReason = (reason: string | undefined): 'stop' | 'length' => (reason === 'length' ? 'length' : 'stop');

function usageOf(line: OllamaChatLine) {
  const prompt = line.prompt_eval_count ?? 0;
  const completion = line.eval_count ?? 0;
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

export function toCompletion(body: unknown, call: ProviderCall): ChatCompletion {
  const line = body as OllamaChatLine;
  if (!line || typeof line !== 'object' || !line.message) throw new SyntaxError('the answer has no message');
  return {
    id: `chatcmpl-${call.requestId}`,
    object: 'chat.completion',
    created: line.created_at ? Math.floor(Date.parse(line.created_at) / 1000) : Math.floor(Date.now() / 1000),
    model: line.model || call.model,
    choices: [{ index: 0, message: { role: 'assistant', content: line.message.content, refusal: null }, logprobs: null, finish_reason: finishReason(line.done_reason) }],
    usage: usageOf(line),
  };
}

/** One NDJSON line → chunks: the first carries the role; the `done` line the finish and usage. */
export function createStreamTranslator(call: ProviderCall) {
  let first = true;
  let done = false;
  const chunk = (line: OllamaChatLine, delta: ChatCompletionChunk['choices'][0]['delta'], finish: ChatCompletionChunk['choices'][0]['finish_reason']): ChatCompletionChunk => ({
    id: `chatcmpl-${call.requestId}`,
    object: 'chat.completion.chunk',
    created: Math.floor(Date.now() / 1000),
    model: line.model || call.model,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
  });
  return {
    push(event: unknown): ChatCompletionChunk[] {
      const line = event as OllamaChatLine;
      if (line.error) throw new Error(`ollama: ${line.error}`);
      const out: ChatCompletionChunk[] = [];
      const text = line.message?.content ?? '';
      if (first || text) out.push(chunk(line, first ? { role: 'assistant', content: text } : { content: text }, null));
      first = false;
      if (line.done) {
        done = true;
        out.push(chunk(line, {}, finishReason(line.done_reason)));
        out.push({ ...chunk(line, {}, null), choices: [], usage: usageOf(line) });
      }
      return out;
    },
    end() {
      if (!done) throw new Error('the stream ended before Ollama said done');
      return undefined;
    },
  };
}

/** Ollama streams one JSON object per line (NDJSON), not server-sent events. */
export async function* decodeNdjson(body: AsyncIterable<Uint8Array>): AsyncGenerator<unknown> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const bytes of body) {
    buffer += decoder.decode(bytes, { stream: true });
    let newline: number;
    while ((newline = buffer.indexOf('\n')) !== -1) {
      const line = buffer.slice(0, newline).trim();
      buffer = buffer.slice(newline + 1);
      if (line) yield JSON.parse(line);
    }
  }
  if (buffer.trim()) yield JSON.parse(buffer);
}

export default defineHttpProvider<OllamaOptions>({
  id: 'ollama-native',
  description: "Ollama's native /api/chat (example plugin)",
  optionsSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['baseUrl'],
    properties: { baseUrl: { type: 'string', pattern: '^https?://' }, keepAlive: { type: 'string' } },
  },
  capabilities: { streaming: true, tools: false, images: true, responseFormat: false },
  endpoint: (options) => ({ baseUrl: options.baseUrl }),
  buildRequest: (call, options) => ({ path: '/api/chat', body: buildChatRequest(call, options) }),
  toCompletion,
  createStreamTranslator,
  decodeStream: decodeNdjson,
  // Ollama answers errors as {"error": "..."}: a 404 for a model it has not pulled.
  readError: (status, body) => ({ message: typeof body === 'object' && body && 'error' in body ? String((body as { error: unknown }).error) : `HTTP ${status}` }),
});
