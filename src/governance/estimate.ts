/**
 * How many tokens to reserve for a request before it runs: its prompt, estimated from the body
 * without a tokenizer, plus the most it may generate. Settling replaces the estimate by the
 * real count, so the estimate decides only how early a limit starts refusing.
 *
 * Text: ASCII characters / 4, rounded up (OpenAI's rule of thumb for English), plus one token
 * per other character (CJK and the like take about one each; splitting accented Latin is
 * rarer, so this errs high there). Per message 4 tokens of framing (role and separators; the
 * OpenAI cookbook counts 3, plus 1 for a name), and 3 to prime the reply. An image counts 765
 * tokens (a 1024×1024 image at high detail on gpt-4o: 85 + 4 tiles × 170); audio, files and
 * other parts count as their JSON / 4. Tools and a response schema count as their JSON text.
 * Embeddings and legacy completions: their `input`/`prompt`, token arrays counted as given.
 *
 * Output: max_completion_tokens ?? max_tokens ?? `defaultMaxTokens` (4096 unless the model's
 * configuration says otherwise; a request without a cap reserves that much), times `n`.
 */

export const DEFAULT_MAX_TOKENS = 4_096;
const MESSAGE_FRAMING = 4;
const REPLY_PRIMING = 3;
const IMAGE_TOKENS = 765;

export interface TokenEstimate {
  prompt: number;
  maxOutput: number;
  /** What admit reserves against tpm. */
  total: number;
}

export function textTokens(text: string): number {
  let ascii = 0;
  let other = 0;
  for (const ch of text) {
    if (ch.codePointAt(0)! < 128) ascii++;
    else other++;
  }
  return Math.ceil(ascii / 4) + other;
}

const jsonTokens = (value: unknown): number => (value === undefined || value === null ? 0 : Math.ceil(JSON.stringify(value).length / 4));

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
