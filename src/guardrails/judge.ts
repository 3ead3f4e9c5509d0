/**
 * An LLM judge: one of the gateway's own model aliases, asked through the gateway itself (so its
 * calls are keyed, limited, booked and logged like any other) whether the texts break a policy
 * the prompt states. Its answer is matched against `blockWhen`.
 */
import type { WebhookAnswer } from './webhook.ts';

export interface JudgeOptions {
  /** An alias of this gateway. */
  model: string;
  /** The question; `{{text}}` is replaced by the texts, one per paragraph. */
  prompt: string;
  /** The gateway key the judge calls with: its spend is booked to it. */
  key: string;
  /** A regular expression (case-insensitive) that, found in the judge's answer, blocks. Default `^\s*BLOCK`. */
  blockWhen?: string;
  /** Default 10000. */
  timeoutMs?: number;
  /** What a failed or late judge means (default allow). */
  onError?: 'allow' | 'block';
}

/** The header that marks the judge's own requests, so that the guardrails do not judge the judge. */
export const JUDGE_HEADER = 'x-switchyard-judge';

export async function askJudge(options: JudgeOptions, texts: readonly { text: string }[], call: { selfUrl: string | undefined; mark: string; signal?: AbortSignal }): Promise<WebhookAnswer> {
  if (!call.selfUrl) throw new Error('the gateway is not listening yet');
  const timeout = AbortSignal.timeout(options.timeoutMs ?? 10_000);
  const content = options.prompt.replace('{{text}}', texts.map((t) => t.text).join('\n\n'));
  const res = await fetch(`${call.selfUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${options.key}`, [JUDGE_HEADER]: call.mark },
    body: JSON.stringify({ model: options.model, messages: [{ role: 'user', content }], temperature: 0, max_tokens: 64 }),
    signal: call.signal ? AbortSignal.any([call.signal, timeout]) : timeout,
  });
  if (!res.ok) {
    await res.body?.cancel();
    throw new Error(`the judge's model answered HTTP ${res.status}`);
  }
  const body = (await res.json()) as { choices?: { message?: { content?: string | null } }[] };
  const said = body.choices?.[0]?.message?.content;
  if (typeof said !== 'string') throw new Error("the judge's model answered no text");
  return { verdict: new RegExp(options.blockWhen ?? '^\\s*BLOCK', 'i').test(said) ? 'block' : 'allow' };
}
