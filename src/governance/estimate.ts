/**
 * How many tokens to reserve for a request before it runs: an upper bound of its prompt plus the
 * most it may generate, so that a limit or budget admitted on the reservation can never be
 * overrun once the real usage is settled (settling then gives the difference back).
 *
 * Text: one token per UTF-8 byte. Byte-level BPE (OpenAI, Anthropic) and SentencePiece with byte
 * fallback (Gemini, Llama) never make a token shorter than one byte, so this bounds every
 * tokenizer; English text really takes about a quarter of it. Per message 8 tokens of framing
 * (role and separators take 3 to 7 across providers), 8 to prime the reply. An image counts 2,500
 * (above the most any provider charges one image: about 1,450 on gpt-4o at high detail, 1,600 on
 * Claude); audio, files and other parts, tools and a response schema count as their JSON bytes.
 * Embeddings and legacy completions: their `input`/`prompt`, token arrays counted as given.
 *
 * Output: max_completion_tokens ?? max_tokens ?? `defaultMaxTokens` (4096 unless the model's
 * configuration says otherwise; a request without a cap reserves that much), times `n`.
 */

export const DEFAULT_MAX_TOKENS = 4_096;
const MESSAGE_FRAMING = 8;
const REPLY_PRIMING = 8;
const IMAGE_TOKENS = 2_500;

export interface TokenEstimate {
  prompt: number;
  maxOutput: number;
  /** What admit reserves against tpm. */
  total: number;
}

export function textTokens(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

const jsonTokens = (value: unknown): number => (value === undefined || value === null ? 0 : Buffer.byteLength(JSON.stringify(value), 'utf8'));

function partTokens(part: unknown): number {
  if (typeof part === 'string') return textTokens(part);
  if (!part || typeof part !== 'object') return 0;
  const p = part as { type?: unknown; text?: unknown; refusal?: unknown };
  if (p.type === 'text' && typeof p.text === 'string') return textTokens(p.text);
  if (p.type === 'refusal' && typeof p.refusal === 'string') return textTokens(p.refusal);
  if (p.type === 'image_url') return IMAGE_TOKENS;
  return jsonTokens(part);
}

function messageTokens(message: unknown): number {
  if (!message || typeof message !== 'object') return 0;
  const m = message as { content?: unknown; name?: unknown; tool_calls?: unknown };
  let tokens = MESSAGE_FRAMING;
  if (typeof m.content === 'string') tokens += textTokens(m.content);
  else if (Array.isArray(m.content)) for (const part of m.content) tokens += partTokens(part);
  if (typeof m.name === 'string') tokens += textTokens(m.name);
  if (m.tool_calls !== undefined) tokens += jsonTokens(m.tool_calls);
  return tokens;
}

/** An embeddings `input` or completions `prompt`: text, texts, or token arrays. */
function inputTokens(input: unknown): number {
  if (typeof input === 'string') return textTokens(input);
  if (!Array.isArray(input)) return 0;
  if (input.every((x) => typeof x === 'number')) return input.length;
  return input.reduce((sum: number, x) => sum + inputTokens(x), 0);
}

const positive = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.ceil(v) : undefined);

export function tokenEstimate(body: unknown, options: { defaultMaxTokens?: number } = {}): TokenEstimate {
  const b = (body && typeof body === 'object' ? body : {}) as Record<string, unknown>;
  let prompt: number;
  let maxOutput: number;
  if (Array.isArray(b.messages)) {
    prompt = REPLY_PRIMING + b.messages.reduce((sum: number, m) => sum + messageTokens(m), 0) + jsonTokens(b.tools) + jsonTokens(b.response_format);
    maxOutput = (positive(b.max_completion_tokens) ?? positive(b.max_tokens) ?? options.defaultMaxTokens ?? DEFAULT_MAX_TOKENS) * (positive(b.n) ?? 1);
  } else if (b.input !== undefined && b.prompt === undefined) {
    // Embeddings generate nothing.
    prompt = inputTokens(b.input);
    maxOutput = 0;
  } else {
    prompt = inputTokens(b.prompt);
    maxOutput = (positive(b.max_tokens) ?? options.defaultMaxTokens ?? DEFAULT_MAX_TOKENS) * (positive(b.n) ?? 1);
  }
  return { prompt, maxOutput, total: prompt + maxOutput };
}
