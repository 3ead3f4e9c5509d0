/** Chat completions → `response` objects, each checked against OpenAI's Response schema. */
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { expectValid, loadFixture } from 'switchyard-gateway/kit/testing';
import type { ChatCompletion } from '../../openai-types.ts';
import { responseIds } from './ids.ts';
import { readResponsesRequest } from './request.ts';
import { chatToResponse, usageOf } from './response.ts';
import type { ResponseObject } from './types.ts';

const FIXTURES = new URL('../../../test/fixtures/openai/', import.meta.url);
const ids = responseIds('req_abc', 1_700_000_000, () => 1_700_000_009);
const recorded = (name: string) => loadFixture(FIXTURES, name).json as ChatCompletion;

function answer(completion: ChatCompletion, body: Record<string, unknown> = {}): ResponseObject {
  const response = chatToResponse(completion, readResponsesRequest({ model: 'my-alias', input: 'x', ...body }), ids);
  expectValid('Response', response);
  return response;
}

/** A chat completion with one choice. */
function completion(message: Record<string, unknown>, finish: ChatCompletion['choices'][number]['finish_reason'] = 'stop', extra: Partial<ChatCompletion> = {}): ChatCompletion {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1,
    model: 'upstream-model-1',
    choices: [{ index: 0, message: { role: 'assistant', content: null, refusal: null, ...message }, logprobs: null, finish_reason: finish }],
    ...extra,
  };
}

describe('chatToResponse', () => {
  it('text: one completed message with an output_text, the model that answered, usage renamed', () => {
    const response = answer(recorded('chat-basic'));
    expect(response).toMatchObject({
      id: 'resp_req_abc',
      object: 'response',
      created_at: 1_700_000_000,
      completed_at: 1_700_000_009,
      status: 'completed',
      error: null,
      incomplete_details: null,
      model: 'gpt-4o-2024-08-06',
      output: [
        {
          type: 'message',
          id: 'msg_req_abc_0',
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'output_text', text: 'The capital of France is Paris.', annotations: [], logprobs: [] }],
        },
      ],
      usage: { input_tokens: 14, input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 }, output_tokens: 7, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 21 },
      service_tier: 'default',
    });
  });

  it('a tool call: a function_call item with the chat call id as call_id, and no empty message', () => {
    const response = answer(recorded('chat-tool-call'), { tools: [{ type: 'function', name: 'get_user_country', parameters: { type: 'object', properties: {} }, strict: false }] });
    expect(response.output).toEqual([{ type: 'function_call', id: 'fc_req_abc_0', call_id: 'call_iXFttys57ap0o16JSlC8yhYo', name: 'get_user_country', arguments: '{}', status: 'completed' }]);
    expect(response.status).toBe('completed');
  });

  it('text and parallel calls: the message first, then the calls in order', () => {
    const calls = [
      { id: 'call_a', type: 'function' as const, function: { name: 'f', arguments: '{"x":1}' } },
      { id: 'call_b', type: 'function' as const, function: { name: 'g', arguments: '{}' } },
    ];
    const response = answer(completion({ content: 'Let me check.', tool_calls: calls }, 'tool_calls'));
    expect(response.output.map((i) => [i.type, i.id])).toEqual([
      ['message', 'msg_req_abc_0'],
      ['function_call', 'fc_req_abc_1'],
      ['function_call', 'fc_req_abc_2'],
    ]);
  });

  it('structured output: the JSON text as output_text, the format echoed', () => {
    const format = { type: 'json_schema', name: 'location', schema: loadFixture(FIXTURES, 'chat-structured-output').request.response_format.json_schema.schema, strict: true };
    const response = answer(recorded('chat-structured-output'), { text: { format } });
    expect(JSON.parse((response.output[0] as { content: Array<{ text: string }> }).content[0].text)).toEqual({ city: 'San Francisco', units: 'c' });
    expect(response.text).toEqual({ format });
  });

  it('reasoning_content: a reasoning item first, its text as reasoning_text, no summary; reasoning tokens counted', () => {
    const chat = recorded('chat-reasoning-usage-details');
    chat.choices[0].message.reasoning_content = 'The user says I am a potato. Play along.';
    const response = answer(chat, { reasoning: { effort: 'high' } });
    expect(response.output).toEqual([
      { type: 'reasoning', id: 'rs_req_abc_0', summary: [], content: [{ type: 'reasoning_text', text: 'The user says I am a potato. Play along.' }], status: 'completed' },
      expect.objectContaining({ type: 'message', id: 'msg_req_abc_1' }),
    ]);
    expect(response.usage).toMatchObject({ output_tokens: 809, output_tokens_details: { reasoning_tokens: 768 }, total_tokens: 820 });
    expect(response.reasoning).toEqual({ effort: 'high', summary: null });
  });

  it('a refusal is the message content OpenAI gives it', () => {
    const response = answer(completion({ refusal: "I'm sorry, I can't help with that." }));
    expect(response.output[0]).toMatchObject({ type: 'message', content: [{ type: 'refusal', refusal: "I'm sorry, I can't help with that." }] });
  });

  it('finish_reason length: incomplete, max_output_tokens, the cut item incomplete, no completed_at', () => {
    const response = answer(completion({ content: 'The capital of Fra' }, 'length'), { max_output_tokens: 16 });
    expect(response).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, completed_at: null, max_output_tokens: 16 });
    expect(response.output[0].status).toBe('incomplete');
  });

  it('content_filter: incomplete for content_filter', () => {
    expect(answer(completion({ content: '' }, 'content_filter'))).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'content_filter' } });
  });

  it('an empty answer is an empty message, not an empty output', () => {
    const response = answer(completion({ content: null }));
    expect(response.output).toEqual([{ type: 'message', id: 'msg_req_abc_0', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: '', annotations: [], logprobs: [] }] }]);
  });

  it('logprobs carried to output_text (bytes and top_logprobs always arrays)', () => {
    const logprobs = {
      content: [
        { token: 'Hi', logprob: -0.1, bytes: [72, 105], top_logprobs: [{ token: 'Hi', logprob: -0.1, bytes: [72, 105] }] },
        { token: '!', logprob: -0.2, bytes: null, top_logprobs: null },
      ],
    };
    const chat = completion({ content: 'Hi!' });
    chat.choices[0].logprobs = logprobs;
    const response = answer(chat, { include: ['message.output_text.logprobs'], top_logprobs: 1 });
    expect((response.output[0] as { content: Array<{ logprobs: unknown }> }).content[0].logprobs).toEqual([logprobs.content[0], { token: '!', logprob: -0.2, bytes: [], top_logprobs: [] }]);
  });

  it('echoes the request as OpenAI does; nulls where the provider default applies; stateless fields', () => {
    const tool = { type: 'function', name: 'f', description: 'does f', parameters: { type: 'object', properties: {} }, strict: true };
    const response = answer(recorded('chat-basic'), {
      instructions: 'Be brief.',
      tools: [tool, { type: 'function', name: 'g' }],
      tool_choice: 'required',
      parallel_tool_calls: false,
      temperature: 0.5,
      metadata: { team: 'a' },
      user: 'u-1',
      safety_identifier: 's-1',
      store: false,
    });
    expect(response).toMatchObject({
      instructions: 'Be brief.',
      tools: [tool, { type: 'function', name: 'g', description: null, parameters: null, strict: null }],
      tool_choice: 'required',
      parallel_tool_calls: false,
      temperature: 0.5,
      top_p: null,
      max_output_tokens: null,
      text: { format: { type: 'text' } },
      reasoning: { effort: null, summary: null },
      metadata: { team: 'a' },
      user: 'u-1',
      safety_identifier: 's-1',
      store: false,
      background: false,
      previous_response_id: null,
      truncation: 'disabled',
    });
    expect(answer(recorded('chat-basic'))).toMatchObject({ instructions: null, tools: [], tool_choice: 'auto', parallel_tool_calls: true, metadata: {} });
  });

  it('a response without usage has none (the field is optional, never null)', () => {
    expect('usage' in answer(completion({ content: 'x' }))).toBe(false);
  });

  it('the official SDK reads it: output_text and the function call', async () => {
    const sdk = (body: unknown) =>
      new OpenAI({
        apiKey: 'sk-test',
        baseURL: 'http://gateway.invalid/v1',
        maxRetries: 0,
        fetch: async () => new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } }),
      });
    const text = await sdk(answer(recorded('chat-basic'))).responses.create({ model: 'my-alias', input: 'x' });
    expect(text.output_text).toBe('The capital of France is Paris.');
    const call = await sdk(answer(recorded('chat-tool-call'))).responses.create({ model: 'my-alias', input: 'x' });
    expect(call.output.find((i) => i.type === 'function_call')).toMatchObject({ call_id: 'call_iXFttys57ap0o16JSlC8yhYo', name: 'get_user_country' });
  });
});

describe('usageOf', () => {
  it('cached and cache-write tokens, reasoning tokens, and the gateway cost carried', () => {
    const usage = usageOf({
      prompt_tokens: 100,
      completion_tokens: 50,
      total_tokens: 150,
      prompt_tokens_details: { cached_tokens: 60, cache_write_tokens: 30 },
      completion_tokens_details: { reasoning_tokens: 20 },
      cost: 0.0012,
    });
    expect(usage).toEqual({
      input_tokens: 100,
      input_tokens_details: { cached_tokens: 60, cache_write_tokens: 30 },
      output_tokens: 50,
      output_tokens_details: { reasoning_tokens: 20 },
      total_tokens: 150,
      cost: 0.0012,
    });
  });

  it('missing details are zeros', () => {
    expect(usageOf({ prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 })).toEqual({
      input_tokens: 1,
      input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
      output_tokens: 2,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 3,
    });
  });
});

describe('custom and namespaced tools (Codex)', () => {
  it('calls come back as the client named its tools: custom_tool_call with the input, function_call with its namespace', () => {
    const tools = [
      { type: 'custom', name: 'apply_patch' },
      { type: 'namespace', name: 'mcp__files', description: '', tools: [{ type: 'function', name: 'write_file' }] },
    ];
    const completion = {
      id: 'c',
      object: 'chat.completion',
      created: 1,
      model: 'upstream-1',
      choices: [
        {
          index: 0,
          finish_reason: 'tool_calls',
          logprobs: null,
          message: {
            role: 'assistant',
            content: null,
            refusal: null,
            tool_calls: [
              { id: 'call_p', type: 'function', function: { name: 'apply_patch', arguments: '{"input":"*** Begin Patch\\n*** End Patch"}' } },
              { id: 'call_w', type: 'function', function: { name: 'mcp__files__write_file', arguments: '{}' } },
            ],
          },
        },
      ],
    } as ChatCompletion;
    const response = chatToResponse(
      completion,
      readResponsesRequest({ model: 'm', input: 'x', tools }),
      responseIds('req_1', 1, () => 2),
    );
    expectValid('Response', response);
    expect(response.output).toEqual([
      { type: 'custom_tool_call', id: 'ctc_req_1_0', call_id: 'call_p', name: 'apply_patch', input: '*** Begin Patch\n*** End Patch', status: 'completed' },
      { type: 'function_call', id: 'fc_req_1_1', call_id: 'call_w', name: 'write_file', namespace: 'mcp__files', arguments: '{}', status: 'completed' },
    ]);
    expect(response.tools).toEqual(tools);
  });
});
