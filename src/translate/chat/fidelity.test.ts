/**
 * The gateway's chat extensions (thinking_blocks, cache_control) as each translation sends them:
 * Bedrock reasoningContent and cachePoints, Gemini thought parts and signatures, Anthropic blocks,
 * none of them to an OpenAI-compatible server; what is left out is reported (ProviderCall.drop).
 */
import { describe, expect, it } from 'vitest';
import { callFactory } from 'switchyard-gateway/kit/testing';
import type { ChatCompletionRequest, ChatMessage } from '../../openai-types.ts';
import type { Drop, ProviderCall } from '../../plugin-api.ts';
import { buildAnthropicRequest } from '../anthropic/request.ts';
import { buildConverseCountTokensRequest, converseTokenCount } from '../bedrock/count-tokens.ts';
import { buildConverseBody } from '../bedrock/request.ts';
import { buildGeminiCountTokensBody, geminiTokenCount } from '../gemini/count-tokens.ts';
import { buildGeminiRequest } from '../gemini/request.ts';
import { withoutChatExtensions } from './extensions.ts';
import { tagGeminiSignature } from './thinking.ts';

const CLAUDE_SIG = 'EqQBCkYIAxgCIkBclaude';
const GEMINI_SIG = 'CpUCAdHtimgemini';
const HISTORY: ChatMessage[] = [
  { role: 'system', content: 'Be brief.', cache_control: { type: 'ephemeral' } },
  { role: 'user', content: 'Hello' },
  {
    role: 'assistant',
    content: 'Calling.',
    tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } }],
    thinking_blocks: [
      { type: 'thinking', thinking: 'Claude thought.', signature: CLAUDE_SIG },
      { type: 'redacted_thinking', data: 'EmwKAhgB' },
      { type: 'thinking', thinking: 'unsigned' },
      { type: 'thinking', thinking: 'Gemini thought.', signature: tagGeminiSignature('thought', GEMINI_SIG) },
      { type: 'thinking', thinking: '', signature: tagGeminiSignature('call', 'sig-call') },
    ],
  },
  { role: 'tool', tool_call_id: 'call_1', content: 'done', cache_control: { type: 'ephemeral', ttl: '1h' } },
];
const TOOLS: ChatCompletionRequest['tools'] = [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } }, cache_control: { type: 'ephemeral' } }];

/** A call whose drops are collected (the gateway's `drop`). */
function recorded(model: string, request: Partial<ChatCompletionRequest>): { call: ProviderCall; drops: Drop[] } {
  const drops: Drop[] = [];
  const call = callFactory({ provider: 'p', model })(request, { drop: (d) => drops.push(d) });
  return { call, drops };
}

describe('Bedrock Converse', () => {
  it('Claude-signed and redacted thinking → reasoningContent ahead of the text; the rest left out and reported; cachePoints after marked parts', () => {
    const { call, drops } = recorded('us.anthropic.claude-sonnet-4-20250514-v1:0', { messages: HISTORY, tools: TOOLS });
    const body = buildConverseBody(call);
    expect(body.system).toEqual([{ text: 'Be brief.' }, { cachePoint: { type: 'default' } }]);
    const messages = body.messages as Array<{ role: string; content: unknown[] }>;
    expect(messages[1].content).toEqual([
      { reasoningContent: { reasoningText: { text: 'Claude thought.', signature: CLAUDE_SIG } } },
      { reasoningContent: { redactedContent: 'EmwKAhgB' } },
      { text: 'Calling.' },
      { toolUse: { toolUseId: 'call_1', name: 'f', input: {} } },
    ]);
    expect(messages[2].content.at(-1)).toEqual({ cachePoint: { type: 'default' } });
    expect((body.toolConfig as { tools: unknown[] }).tools).toEqual([{ toolSpec: { name: 'f', inputSchema: { json: { type: 'object' } } } }, { cachePoint: { type: 'default' } }]);
    expect(drops).toEqual([{ field: 'messages', what: 'thinking blocks', reason: expect.stringContaining('signed itself') }]);
  });

  it('reasoning_effort → Claude thinking budget, kept under maxTokens; refused for a model without that switch', () => {
    const claude = (request: Partial<ChatCompletionRequest>) => buildConverseBody(recorded('anthropic.claude-3-7-sonnet-20250219-v1:0', request).call);
    expect(claude({ reasoning_effort: 'high', max_completion_tokens: 32_000 }).additionalModelRequestFields).toEqual({ thinking: { type: 'enabled', budget_tokens: 24_576 } });
    expect(claude({ reasoning_effort: 'high', max_completion_tokens: 10_000 }).additionalModelRequestFields).toEqual({ thinking: { type: 'enabled', budget_tokens: 9_999 } });
    expect(claude({ reasoning_effort: 'low', max_completion_tokens: 1_000 }).additionalModelRequestFields).toBeUndefined();
    expect(claude({ reasoning_effort: 'none' }).additionalModelRequestFields).toBeUndefined();
    // Anthropic's own switch, when a client sends it, wins.
    expect(claude({ reasoning_effort: 'high', thinking: { type: 'enabled', budget_tokens: 2_000 } }).additionalModelRequestFields).toEqual({ thinking: { type: 'enabled', budget_tokens: 2_000 } });
    expect(() => buildConverseBody(recorded('us.amazon.nova-micro-v1:0', { reasoning_effort: 'low' }).call)).toThrow(/reasoning_effort/);
  });

  it('CountTokens: the counted Converse fields under input.converse; the answer is inputTokens', () => {
    const spec = buildConverseCountTokensRequest(recorded('anthropic.claude-3-7-sonnet-20250219-v1:0', { messages: HISTORY.slice(0, 2), tools: TOOLS, max_tokens: 100 }).call, {
      guardrail: { identifier: 'g', version: '1' },
    });
    expect(spec.path).toBe('/model/anthropic.claude-3-7-sonnet-20250219-v1%3A0/count-tokens');
    expect(Object.keys((spec.body as { input: { converse: object } }).input.converse).sort()).toEqual(['messages', 'system', 'toolConfig']);
    expect(converseTokenCount({ inputTokens: 12 })).toBe(12);
    expect(() => converseTokenCount({ message: 'nope' })).toThrow(SyntaxError);
  });
});

describe('Gemini', () => {
  it("its signatures go back where they stood (a thought part, the first call); Claude's thinking and cache markers are left out and reported", () => {
    const { call, drops } = recorded('gemini-3-pro-preview', { messages: HISTORY, tools: TOOLS });
    const body = buildGeminiRequest(call);
    const contents = body.contents as Array<{ role: string; parts: unknown[] }>;
    expect(contents[1]).toEqual({
      role: 'model',
      parts: [{ text: 'Gemini thought.', thought: true, thoughtSignature: GEMINI_SIG }, { text: 'Calling.' }, { functionCall: { name: 'f', args: {} }, thoughtSignature: 'sig-call' }],
    });
    expect(JSON.stringify(body)).not.toMatch(/cache_control|cachePoint|gemini:/);
    expect(drops.map((d) => `${d.field} (${d.what})`)).toEqual(['cache_control (prompt-cache markers)', 'messages (thinking blocks)']);
  });

  it("a text part's signature goes back on the turn's text", () => {
    const messages: ChatMessage[] = [
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Hello.', thinking_blocks: [{ type: 'thinking', thinking: '', signature: tagGeminiSignature('text', 'sig-text') }] },
      { role: 'user', content: 'Again' },
    ];
    const body = buildGeminiRequest(recorded('gemini-2.5-flash', { messages }).call);
    expect((body.contents as unknown[])[1]).toEqual({ role: 'model', parts: [{ text: 'Hello.', thoughtSignature: 'sig-text' }] });
  });

  it('countTokens: the whole generateContent request under generateContentRequest, with the model named; totalTokens (a zero left out is 0)', () => {
    const body = buildGeminiCountTokensBody(recorded('gemini-2.5-flash', { messages: HISTORY.slice(0, 2) }).call, 'models/gemini-2.5-flash');
    expect(body).toEqual({
      generateContentRequest: { model: 'models/gemini-2.5-flash', contents: [{ role: 'user', parts: [{ text: 'Hello' }] }], systemInstruction: { role: 'user', parts: [{ text: 'Be brief.' }] } },
    });
    expect(geminiTokenCount({ totalTokens: 9 })).toBe(9);
    expect(geminiTokenCount({})).toBe(0);
    expect(() => geminiTokenCount([])).toThrow(SyntaxError);
  });
});

describe('Anthropic Messages', () => {
  it('Claude-signed and redacted thinking first in the assistant turn; cache markers on the marked block, system and tool', () => {
    const { call, drops } = recorded('claude-sonnet-4-5', { messages: HISTORY, tools: TOOLS });
    const body = buildAnthropicRequest(call, { maxTokens: 1000 });
    expect(body.system).toEqual([{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }]);
    const messages = body.messages as Array<{ role: string; content: Array<Record<string, unknown>> }>;
    expect(messages[1].content.map((b) => b.type)).toEqual(['thinking', 'redacted_thinking', 'text', 'tool_use']);
    expect(messages[1].content[0]).toEqual({ type: 'thinking', thinking: 'Claude thought.', signature: CLAUDE_SIG });
    expect(messages[2].content.at(-1)).toEqual({ type: 'tool_result', tool_use_id: 'call_1', content: 'done', cache_control: { type: 'ephemeral', ttl: '1h' } });
    expect((body.tools as Array<Record<string, unknown>>)[0].cache_control).toEqual({ type: 'ephemeral' });
    expect(drops.map((d) => d.field)).toEqual(['messages']);
  });

  it('without markers the system prompt stays one string', () => {
    const body = buildAnthropicRequest(
      recorded('claude-sonnet-4-5', {
        messages: [
          { role: 'system', content: 'a' },
          { role: 'system', content: 'b' },
          { role: 'user', content: 'hi' },
        ],
      }).call,
      { maxTokens: 10 },
    );
    expect(body.system).toBe('a\n\nb');
  });
});

describe('OpenAI-compatible chat (withoutChatExtensions)', () => {
  it('takes off thinking_blocks and cache_control, reports the thinking; markers are not reported when prompt_cache_key carries them', () => {
    const { call, drops } = recorded('gpt-5', { messages: HISTORY, tools: TOOLS, prompt_cache_key: 'swy-x' });
    const out = withoutChatExtensions(call);
    expect(JSON.stringify(out)).not.toMatch(/thinking_blocks|cache_control/);
    expect(out.messages[2]).toEqual({ role: 'assistant', content: 'Calling.', tool_calls: HISTORY[2].tool_calls });
    expect(out.prompt_cache_key).toBe('swy-x');
    expect(drops.map((d) => d.field)).toEqual(['messages']);
    // The call's own request is untouched (a retry re-uses it).
    expect(call.request.messages[2].thinking_blocks).toHaveLength(5);
  });

  it('markers without prompt_cache_key are reported; a request without extensions is returned as it is', () => {
    const marked = recorded('gpt-5', { messages: [{ role: 'user', content: 'hi', cache_control: { type: 'ephemeral' } }] });
    withoutChatExtensions(marked.call);
    expect(marked.drops.map((d) => d.field)).toEqual(['cache_control']);
    const plain = recorded('gpt-5', {});
    expect(withoutChatExtensions(plain.call)).toBe(plain.call.request);
    expect(plain.drops).toEqual([]);
  });
});
