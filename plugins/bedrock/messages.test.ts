/** Which models take the Messages body, and the body and stream events as Bedrock has them. */
import { describe, expect, it } from 'vitest';
import { isAnthropicModel, toBedrockBody, unwrapChunk, usesMessages } from './messages.ts';

describe('isAnthropicModel / usesMessages', () => {
  it('Claude by id, cross-region profile or profile ARN; not other models or an application profile', () => {
    expect(isAnthropicModel('anthropic.claude-3-5-haiku-20241022-v1:0')).toBe(true);
    expect(isAnthropicModel('eu.anthropic.claude-sonnet-4-5-20250929-v1:0')).toBe(true);
    expect(isAnthropicModel('arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-sonnet-4-5-20250929-v1:0')).toBe(true);
    expect(isAnthropicModel('us.amazon.nova-micro-v1:0')).toBe(false);
    expect(isAnthropicModel('arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/abc123')).toBe(false);
    expect(usesMessages(undefined, 'anthropic.claude-x')).toBe(false);
    expect(usesMessages('auto', 'anthropic.claude-x')).toBe(true);
    expect(usesMessages('messages', 'arn:aws:bedrock:us-east-1:1:application-inference-profile/abc')).toBe(true);
  });
});

describe('toBedrockBody', () => {
  it('drops model and stream, adds the Bedrock version and the betas as an array', () => {
    expect(toBedrockBody({ model: 'm', stream: true, max_tokens: 5, messages: [] }, ' a-1 ,b-2,')).toEqual({
      anthropic_version: 'bedrock-2023-05-31',
      anthropic_beta: ['a-1', 'b-2'],
      max_tokens: 5,
      messages: [],
    });
    expect(toBedrockBody({ max_tokens: 5 }, undefined)).toEqual({ anthropic_version: 'bedrock-2023-05-31', max_tokens: 5 });
  });
});

describe('unwrapChunk', () => {
  it('a chunk frame → the Anthropic event its base64 bytes hold; other frames unchanged', () => {
    const data = { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'hé' } };
    const bytes = Buffer.from(JSON.stringify(data)).toString('base64');
    expect(unwrapChunk({ kind: 'event', type: 'chunk', payload: { bytes } })).toEqual({ event: 'content_block_delta', data, raw: JSON.stringify(data) });
    const exception = { kind: 'exception' as const, type: 'throttlingException', payload: { message: 'slow down' } };
    expect(unwrapChunk(exception)).toBe(exception);
  });
});
