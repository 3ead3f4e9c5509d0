/** The encrypted_content the gateway writes for signed reasoning: what it holds, and what it refuses to believe. */
import { describe, expect, it } from 'vitest';
import type { ThinkingBlock } from '../../openai-types.ts';
import { decodeReasoning, encodeReasoning } from './reasoning.ts';

const claude: ThinkingBlock[] = [
  { type: 'thinking', thinking: 'Let me see.', signature: 'EqQBCkgI+/==' },
  { type: 'redacted_thinking', data: 'EmwKAhgB' },
];
const envelope = (value: unknown) => `swy-rs1.${Buffer.from(JSON.stringify(value)).toString('base64url')}`;

describe('encodeReasoning / decodeReasoning', () => {
  it('round-trips signed blocks exactly, behind a versioned prefix, the signatures not in plain sight', () => {
    const text = encodeReasoning(claude)!;
    expect(text).toMatch(/^swy-rs1\.[A-Za-z0-9_-]+$/);
    expect(text).not.toContain('EqQBCkgI');
    expect(decodeReasoning(text)).toEqual({ blocks: claude });
  });

  it('unsigned thinking is not carried (no provider could verify it); none signed is no encrypted_content', () => {
    expect(encodeReasoning([{ type: 'thinking', thinking: 'just text' }])).toBeUndefined();
    expect(encodeReasoning(undefined)).toBeUndefined();
    const text = encodeReasoning([{ type: 'thinking', thinking: 'rest' }, ...claude]);
    expect(decodeReasoning(text)).toEqual({ blocks: claude });
  });

  it("Gemini's tagged signatures are their own family; one answer's blocks keep to the first block's family", () => {
    const gemini: ThinkingBlock = { type: 'thinking', thinking: 't', signature: 'gemini:call:CiQB' };
    expect(decodeReasoning(encodeReasoning([gemini, ...claude]))).toEqual({ blocks: [gemini] });
  });

  it.each([
    ['not a string', 42],
    ["OpenAI's own encrypted reasoning", 'gAAAAABo1x2y3z'],
    ['bad base64 JSON', 'swy-rs1.@@@@'],
    ['an unknown family', envelope({ f: 'other', b: claude })],
    ['no blocks', envelope({ f: 'claude', b: [] })],
    ['a block of another shape', envelope({ f: 'claude', b: [{ type: 'thinking', thinking: 'x' }] })],
    ['a Gemini block said to be Claude', envelope({ f: 'claude', b: [{ type: 'thinking', thinking: 'x', signature: 'gemini:text:abc' }] })],
    ['too many blocks', envelope({ f: 'claude', b: Array.from({ length: 257 }, () => claude[1]) })],
  ])('refuses %s with a reason', (_, value) => {
    const decoded = decodeReasoning(value);
    expect(decoded).toEqual({ error: expect.any(String) });
  });
});
