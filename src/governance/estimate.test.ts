import { describe, expect, it } from 'vitest';
import { DEFAULT_MAX_TOKENS, textTokens, tokenEstimate } from './estimate.ts';

describe('tokenEstimate', () => {
  it('bounds text at one token per UTF-8 byte (no tokenizer makes a shorter token)', () => {
    expect(textTokens('')).toBe(0);
    expect(textTokens('Hello, world')).toBe(12);
    expect(textTokens('こんにちは')).toBe(15);
  });

  it('adds message framing, reply priming, images, tools, and the output cap times n', () => {
    const body = {
      model: 'gpt-4o',
      messages: [
        { role: 'system', content: 'Be brief.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image_url', image_url: { url: 'https://x/y.png' } },
          ],
        },
      ],
      tools: [{ type: 'function', function: { name: 'f' } }],
      max_completion_tokens: 100,
      max_tokens: 999,
      n: 2,
    };
    const toolJson = JSON.stringify(body.tools).length;
    const prompt = 8 + (8 + 9) + (8 + 13 + 2500) + toolJson;
    expect(tokenEstimate(body)).toEqual({ prompt, maxOutput: 200, total: prompt + 200 });
  });

  it('reserves the default cap when the request sets none, per model when told', () => {
    const body = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };
    expect(tokenEstimate(body).maxOutput).toBe(DEFAULT_MAX_TOKENS);
    expect(tokenEstimate(body, { defaultMaxTokens: 8_192 }).maxOutput).toBe(8_192);
    expect(tokenEstimate({ ...body, max_tokens: 16 }).maxOutput).toBe(16);
  });

  it('estimates embeddings inputs (text or token arrays) with nothing generated', () => {
    expect(tokenEstimate({ model: 'e', input: ['abcd', 'abcdefgh'] })).toEqual({ prompt: 12, maxOutput: 0, total: 12 });
    expect(tokenEstimate({ model: 'e', input: [[1, 2, 3], [4]] })).toEqual({ prompt: 4, maxOutput: 0, total: 4 });
  });
});
