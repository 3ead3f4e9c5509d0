/**
 * Whose signature a thinking block carries. A signature verifies only with the provider family
 * that made it, and a conversation may move between families (a fallback, a new alias): Gemini's
 * thought signatures are tagged `gemini:<where>:` (where the part that carried it stood: a thought,
 * a function call or a text part), so that they go back to Gemini and to no one else, and Claude's
 * (Anthropic's and Bedrock's, untagged) never reach Gemini.
 */
import type { ThinkingBlock } from '../../openai-types.ts';

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

/** The blocks a Claude model can take back: signed by Claude (not Gemini), or redacted. */
export function claudeThinkingBlocks(blocks: readonly ThinkingBlock[] | undefined): ThinkingBlock[] {
  return (blocks ?? []).filter((b) => (b.type === 'redacted_thinking' ? !!b.data : !!b.signature && !GEMINI.test(b.signature)));
}
