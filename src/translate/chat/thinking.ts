/**
 * Whose signature a thinking block carries. A signature verifies only with the provider family
 * that made it, and a conversation may move between families (a fallback, a new alias): Gemini's
 * thought signatures are tagged `gemini:<where>:` (where the part that carried it stood: a thought,
 * a function call or a text part), so that they go back to Gemini and to no one else, and Claude's
 * (Anthropic's and Bedrock's, untagged) never reach Gemini.
 */
import type { ThinkingBlock } from '../../openai-types.ts';
import type { ProviderCall } from '../../plugin-api.ts';
import { reportDrop } from '../../providers/drops.ts';

export type GeminiSignatureSite = 'thought' | 'call' | 'text';

const GEMINI = /^gemini:(thought|call|text):(.+)$/s;

export function tagGeminiSignature(site: GeminiSignatureSite, signature: string): string {
  return `gemini:${site}:${signature}`;
}

/** The Gemini signature and where it goes, or undefined for another family's (or none). */
export function geminiSignatureOf(block: ThinkingBlock): { site: GeminiSignatureSite; signature: string } | undefined {
  if (block.type !== 'thinking' || !block.signature) return undefined;
  const match = GEMINI.exec(block.signature);
  return match ? { site: match[1] as GeminiSignatureSite, signature: match[2] } : undefined;
}

/** Whether a Claude model can take the block back: signed by Claude (not Gemini), or redacted. */
export function isClaudeThinking(b: ThinkingBlock): boolean {
  return b.type === 'redacted_thinking' ? !!b.data : !!b.signature && !GEMINI.test(b.signature);
}

/** The blocks a Claude model can take back. */
export function claudeThinkingBlocks(blocks: readonly ThinkingBlock[] | undefined): ThinkingBlock[] {
  return (blocks ?? []).filter(isClaudeThinking);
}

/** What a translation to Claude says when it leaves thinking out. */
export const CLAUDE_LEAVES_OUT = "Claude takes back only the thinking it signed itself (unsigned thinking, and Gemini's, cannot be verified)";

/**
 * Reports, once per request, the past thinking a translation leaves out (`kept` says which blocks
 * it carries): the answer's `x-switchyard-dropped` names it, or a strict request is refused.
 */
export function reportThinkingLeftOut(call: ProviderCall, kept: (block: ThinkingBlock) => boolean, reason: string): void {
  if (call.request.messages.some((m) => m.thinking_blocks?.some((b) => !kept(b)))) reportDrop(call, { field: 'messages', what: 'thinking blocks', reason });
}

/** Reports, once per request, cache markers a target has no place for. */
export function reportCacheMarkersLeftOut(call: ProviderCall, reason: string): void {
  const r = call.request;
  if (r.messages.some((m) => m.cache_control) || r.tools?.some((t) => t.cache_control)) reportDrop(call, { field: 'cache_control', what: 'prompt-cache markers', reason });
}
