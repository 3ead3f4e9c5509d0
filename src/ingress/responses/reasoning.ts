/**
 * A reasoning item's `encrypted_content` on a translated target: the provider's signed reasoning
 * (the chat model's `thinking_blocks`: Anthropic's thinking with its signature and redacted
 * thinking, Bedrock's reasoning signatures, Gemini's tagged thought signatures) packed into one
 * opaque string, so a stateless client (`store: false`, `include: ["reasoning.encrypted_content"]`)
 * that sends the item back gets the blocks back to the provider unchanged on its next turn.
 *
 *   swy-rs1.<base64url of {"f": family, "b": blocks}>
 *
 * `swy-rs1.` says whose and which version; `f` is the family that signed (`claude`: Anthropic
 * and Bedrock; `gemini`: signatures tagged `gemini:` by translate/chat/thinking.ts). It is not
 * encrypted: the signatures inside it are what the provider verifies, and the gateway holds no
 * key. It is never trusted blindly: a string that is not one (OpenAI's own encrypted reasoning
 * after a failover, a client's garbage, a block of the wrong shape or family) is reported dropped,
 * or refused when the request is strict. A target that speaks Responses itself (OpenAI) cannot read
 * it either: the reasoning items holding it are left out of a pass-through body
 * (`withoutGatewayReasoning`), as OpenAI would refuse them.
 */
import type { ThinkingBlock } from '../../openai-types.ts';
import { geminiSignatureOf } from '../../translate/chat/thinking.ts';

const PREFIX = 'swy-rs1.';

/** More blocks than one answer ever has: a bound on what a client can make the gateway carry. */
const MAX_BLOCKS = 256;

type Family = 'claude' | 'gemini';

const familyOf = (block: ThinkingBlock): Family => (geminiSignatureOf(block) ? 'gemini' : 'claude');

/** The blocks as a reasoning item's encrypted_content; undefined when none is signed (nothing a provider could verify). */
export function encodeReasoning(blocks: readonly ThinkingBlock[] | undefined): string | undefined {
  const signed = (blocks ?? []).filter((b) => (b.type === 'thinking' ? !!b.signature : !!b.data));
  if (!signed.length) return undefined;
  const family = familyOf(signed[0]);
  const kept = signed.filter((b) => familyOf(b) === family);
  return PREFIX + Buffer.from(JSON.stringify({ f: family, b: kept })).toString('base64url');
}

export function isGatewayReasoning(text: string): boolean {
  return text.startsWith(PREFIX);
}

/** The blocks an encrypted_content holds, or why it holds none the gateway can carry. */
export function decodeReasoning(text: unknown): { blocks: ThinkingBlock[] } | { error: string } {
  if (typeof text !== 'string') return { error: 'expected a string' };
  if (!isGatewayReasoning(text)) return { error: "it is not reasoning this gateway wrote (another provider's encrypted reasoning cannot go to this one)" };
  let envelope: unknown;
  try {
    envelope = JSON.parse(Buffer.from(text.slice(PREFIX.length), 'base64url').toString('utf8'));
  } catch {
    return { error: 'it is not the encoding the gateway wrote (damaged or altered)' };
  }
  if (!envelope || typeof envelope !== 'object') return { error: 'it holds no reasoning blocks' };
  const { f, b } = envelope as { f?: unknown; b?: unknown };
  if ((f !== 'claude' && f !== 'gemini') || !Array.isArray(b) || !b.length || b.length > MAX_BLOCKS) return { error: 'it holds no reasoning blocks the gateway recognises' };
  const blocks: ThinkingBlock[] = [];
  for (const raw of b) {
    const block = blockOf(raw);
    if (!block || familyOf(block) !== f) return { error: 'a reasoning block in it is not of the shape or family the gateway wrote' };
    blocks.push(block);
  }
  return { blocks };
}

function blockOf(raw: unknown): ThinkingBlock | undefined {
  if (!raw || typeof raw !== 'object') return undefined;
  const b = raw as Record<string, unknown>;
  if (b.type === 'redacted_thinking') return typeof b.data === 'string' && b.data ? { type: 'redacted_thinking', data: b.data } : undefined;
  if (b.type !== 'thinking' || typeof b.thinking !== 'string' || typeof b.signature !== 'string' || !b.signature) return undefined;
  return { type: 'thinking', thinking: b.thinking, signature: b.signature };
}

/**
 * The client's Responses body without the reasoning items whose encrypted_content the gateway
 * wrote (after a failover or an alias change a conversation can move from a translated target to
 * OpenAI, which cannot decrypt them); the body itself when there are none.
 */
export function withoutGatewayReasoning<B extends Readonly<Record<string, unknown>>>(body: B): B {
  const input = body.input;
  if (!Array.isArray(input)) return body;
  const ours = (item: unknown) => {
    const i = item as { type?: unknown; encrypted_content?: unknown } | null;
    return i?.type === 'reasoning' && typeof i.encrypted_content === 'string' && isGatewayReasoning(i.encrypted_content);
  };
  return input.some(ours) ? { ...body, input: input.filter((item) => !ours(item)) } : body;
}
