/**
 * Thinking blocks of a Messages assistant turn → the chat model's `thinking_blocks` (the gateway's
 * extension, see ThinkingBlock in openai-types.ts): the text and the signature, or the redacted
 * data, kept as sent so that a provider that signed them (Anthropic, Bedrock, Gemini) gets them
 * back on the next turn.
 */
import type { ThinkingBlock } from '../../openai-types.ts';
import { stringAt } from './fields.ts';

export function thinkingBlockOf(block: Record<string, unknown>, param: string): ThinkingBlock {
  if (block.type === 'redacted_thinking') return { type: 'redacted_thinking', data: stringAt(block.data, `${param}.data`) };
  const out: ThinkingBlock = { type: 'thinking', thinking: stringAt(block.thinking ?? '', `${param}.thinking`) };
  // A translated answer gives an empty signature: there is nothing to send back.
  if (typeof block.signature === 'string' && block.signature) out.signature = block.signature;
  return out;
}
