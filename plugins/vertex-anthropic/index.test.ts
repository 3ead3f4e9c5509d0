/** Claude on Vertex: the Messages body as Vertex takes it, from a translation and from a client's own body. */
import { describe, expect, it } from 'vitest';
import { buildAnthropicRequest } from 'switchyard-gateway/kit';
import { callFactory } from 'switchyard-gateway/kit/testing';
import { VERTEX_ANTHROPIC_VERSION, vertexMessagesBody } from './index.ts';

const callOf = callFactory({ provider: 'claude', model: 'claude-sonnet-4-5@20250929' });

describe('vertexMessagesBody', () => {
  it('takes the model out (it is in the path) and puts anthropic_version vertex-2023-10-16 in', () => {
    const body = buildAnthropicRequest(callOf({ max_tokens: 64, stream: true }), { maxTokens: 4096 });
    expect(body.model).toBe('claude-sonnet-4-5@20250929');
    const vertex = vertexMessagesBody(body);
    expect(vertex).not.toHaveProperty('model');
    expect(vertex).toEqual({ anthropic_version: VERTEX_ANTHROPIC_VERSION, max_tokens: 64, messages: [{ role: 'user', content: 'hi' }], stream: true });
    expect(VERTEX_ANTHROPIC_VERSION).toBe('vertex-2023-10-16');
  });

  it("leaves every other field of a client's body as it came (thinking, signatures, cache_control)", () => {
    const client = {
      model: 'sonnet',
      max_tokens: 2048,
      thinking: { type: 'enabled', budget_tokens: 1024 },
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'hi', cache_control: { type: 'ephemeral' } }] },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'x', signature: 'sig==' },
            { type: 'text', text: 'hello' },
          ],
        },
      ],
    };
    const { model: _model, ...rest } = client;
    expect(vertexMessagesBody(client)).toEqual({ anthropic_version: 'vertex-2023-10-16', ...rest });
  });
});
