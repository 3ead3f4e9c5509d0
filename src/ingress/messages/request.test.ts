import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { loadFixture } from 'switchyard-gateway/kit/testing';
import requestSchema from '../../../schemas/chat-request.schema.json' with { type: 'json' };
import { GatewayError } from '../../errors.ts';
import type { ChatCompletionRequest } from '../../openai-types.ts';
import { effortOfBudget, messagesToChat, translateMessagesRequest } from './request.ts';

const ANTHROPIC = new URL('../../../test/fixtures/anthropic/', import.meta.url);
const validChat = new Ajv({ allErrors: true, discriminator: true, strict: false }).compile(requestSchema);

const base = { model: 'claude-x', max_tokens: 100 };
const chatOf = (extra: Record<string, unknown>): ChatCompletionRequest => messagesToChat({ ...base, messages: [{ role: 'user', content: 'hi' }], ...extra });
const userTurn = (content: unknown) => messagesToChat({ ...base, messages: [{ role: 'user', content }] }).messages;

/** The error a translation throws; fails the test when it throws something else or nothing. */
function errorOf(body: unknown): GatewayError {
  try {
    messagesToChat(body);
  } catch (err) {
    expect(err).toBeInstanceOf(GatewayError);
    return err as GatewayError;
  }
  throw new Error('expected the translation to fail');
}

describe('messagesToChat: recorded Messages requests', () => {
  it.each([
    'messages-tool-use',
    'messages-parallel-tool-use',
    'messages-parallel-tool-results-followup',
    'messages-system-prompt',
    'messages-image-input-base64',
    'messages-usage-cache-read',
    'stream-thinking',
  ])('%s translates completely into a chat request the validate stage accepts', (name) => {
    const { chat, unservable, untranslatable } = translateMessagesRequest(loadFixture(ANTHROPIC, name).request);
    expect(unservable).toBeUndefined();
    expect(untranslatable).toBeUndefined();
    expect(validChat(chat), JSON.stringify(validChat.errors)).toBe(true);
  });

  it('a tool-use round trip: assistant tool_use blocks → tool_calls, tool_result blocks → tool messages right after', () => {
    const chat = messagesToChat(loadFixture(ANTHROPIC, 'messages-parallel-tool-results-followup').request);
    expect(chat.messages).toEqual([
      { role: 'user', content: 'Use the test_tool with count 1, then use it again with count 2' },
      {
        role: 'assistant',
        content: "I'll use the test_tool twice as requested - first with count 1, then with count 2.",
        tool_calls: [
          { id: 'toolu_01L8GVQapA1HmggQcrwboukH', type: 'function', function: { name: 'test_tool', arguments: '{"count":1}' } },
          { id: 'toolu_01J5Fvzxu7DP1Uh59c1kr5JD', type: 'function', function: { name: 'test_tool', arguments: '{"count":2}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'toolu_01L8GVQapA1HmggQcrwboukH', content: 'Called with 1' },
      { role: 'tool', tool_call_id: 'toolu_01J5Fvzxu7DP1Uh59c1kr5JD', content: 'Called with 2' },
    ]);
    expect(chat.tools).toEqual([
      {
        type: 'function',
        function: {
          name: 'test_tool',
          description: 'A test tool',
          parameters: {
            $schema: 'https://json-schema.org/draft/2020-12/schema',
            type: 'object',
            properties: { count: { type: 'number' } },
            required: ['count'],
            additionalProperties: false,
          },
        },
      },
    ]);
    expect(chat.max_completion_tokens).toBe(1000);
    expect(chat.stream).toBe(false);
  });

  it('an image block with a base64 source becomes a data URL image part', () => {
    const request = loadFixture(ANTHROPIC, 'messages-image-input-base64').request;
    const [message] = messagesToChat(request).messages;
    const data = request.messages[0].content[1].source.data;
    expect(message).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'What is this vegetable?' },
        { type: 'image_url', image_url: { url: `data:image/jpeg;base64,${data}` } },
      ],
    });
  });
});

describe('messagesToChat: system', () => {
  it('a string → one leading system message', () => {
    expect(chatOf({ system: 'Be brief.' }).messages[0]).toEqual({ role: 'system', content: 'Be brief.' });
  });

  it('text blocks → their texts joined by a blank line; a cache marker marks the system message', () => {
    const system = [
      { type: 'text', text: 'You are a helper.' },
      { type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral', ttl: '1h' } },
    ];
    expect(chatOf({ system }).messages[0]).toEqual({ role: 'system', content: 'You are a helper.\n\nBe brief.', cache_control: { type: 'ephemeral', ttl: '1h' } });
    expect(() => chatOf({ system: [{ type: 'text', text: 'x', cache_control: { type: 'forever' } }] })).toThrow(/system\[0\]\.cache_control\.type/);
  });

  it('empty → no system message; a system turn inside messages stays where it is', () => {
    expect(chatOf({ system: '' }).messages).toEqual([{ role: 'user', content: 'hi' }]);
    const chat = messagesToChat({
      ...base,
      messages: [
        { role: 'user', content: 'a' },
        { role: 'system', content: [{ type: 'text', text: 'now formal' }] },
        { role: 'user', content: 'b' },
      ],
    });
    expect(chat.messages.map((m) => m.role)).toEqual(['user', 'system', 'user']);
  });
});

describe('messagesToChat: user content', () => {
  it('text blocks → text parts; a cache marker marks the message it ends up in', () => {
    expect(
      userTurn([
        { type: 'text', text: 'a', cache_control: { type: 'ephemeral' } },
        { type: 'text', text: 'b' },
      ]),
    ).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'a' },
          { type: 'text', text: 'b' },
        ],
        cache_control: { type: 'ephemeral' },
      },
    ]);
  });

  it('a marked tool_result marks its tool message, not the user message after it', () => {
    expect(
      userTurn([
        { type: 'tool_result', tool_use_id: 't1', content: 'ok', cache_control: { type: 'ephemeral' } },
        { type: 'text', text: 'go on' },
      ]),
    ).toEqual([
      { role: 'tool', tool_call_id: 't1', content: 'ok', cache_control: { type: 'ephemeral' } },
      { role: 'user', content: [{ type: 'text', text: 'go on' }] },
    ]);
  });

  it('a top-level cache_control (automatic caching) marks the last message', () => {
    const chat = messagesToChat({
      ...base,
      cache_control: { type: 'ephemeral' },
      messages: [
        { role: 'user', content: 'a' },
        { role: 'assistant', content: 'b' },
        { role: 'user', content: 'c' },
      ],
    });
    expect(chat.messages.map((m) => m.cache_control)).toEqual([undefined, undefined, { type: 'ephemeral' }]);
  });

  it('an image by URL → an image_url part with the URL', () => {
    expect(userTurn([{ type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } }])[0].content).toEqual([{ type: 'image_url', image_url: { url: 'https://example.com/a.png' } }]);
  });

  it('a base64 PDF document → a chat file part (filename from the title, else document.pdf)', () => {
    const pdf = { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' };
    expect(userTurn([{ type: 'document', source: pdf, title: 'report.pdf', citations: { enabled: true } }])[0].content).toEqual([
      { type: 'file', file: { filename: 'report.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' } },
    ]);
    expect(userTurn([{ type: 'document', source: pdf }])[0].content).toEqual([{ type: 'file', file: { filename: 'document.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' } }]);
  });

  it('plain-text and content documents → their text and images', () => {
    expect(userTurn([{ type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'the text' } }])[0].content).toEqual([{ type: 'text', text: 'the text' }]);
    const content = [
      { type: 'text', text: 'one' },
      { type: 'image', source: { type: 'url', url: 'https://example.com/b.png' } },
    ];
    expect(userTurn([{ type: 'document', source: { type: 'content', content } }])[0].content).toEqual([
      { type: 'text', text: 'one' },
      { type: 'image_url', image_url: { url: 'https://example.com/b.png' } },
    ]);
  });

  it('thinking and redacted_thinking blocks are dropped', () => {
    expect(
      userTurn([
        { type: 'redacted_thinking', data: 'xx' },
        { type: 'text', text: 'a' },
      ])[0].content,
    ).toEqual([{ type: 'text', text: 'a' }]);
  });
});

describe('messagesToChat: tool results', () => {
  const assistant = { role: 'assistant', content: [{ type: 'tool_use', id: 'call_1', name: 'look', input: { q: 1 } }] };
  const resultTurn = (blocks: unknown[]) => messagesToChat({ ...base, messages: [{ role: 'user', content: 'go' }, assistant, { role: 'user', content: blocks }] }).messages.slice(2);

  it('text blocks of a result are joined by newlines; an absent content is empty', () => {
    expect(
      resultTurn([
        {
          type: 'tool_result',
          tool_use_id: 'call_1',
          content: [
            { type: 'text', text: 'line 1' },
            { type: 'text', text: 'line 2' },
          ],
        },
      ]),
    ).toEqual([{ role: 'tool', tool_call_id: 'call_1', content: 'line 1\nline 2' }]);
    expect(resultTurn([{ type: 'tool_result', tool_use_id: 'call_1' }])).toEqual([{ role: 'tool', tool_call_id: 'call_1', content: '' }]);
  });

  it('is_error is said in the text', () => {
    expect(resultTurn([{ type: 'tool_result', tool_use_id: 'call_1', content: 'no such file', is_error: true }])).toEqual([{ role: 'tool', tool_call_id: 'call_1', content: 'Error: no such file' }]);
    expect(resultTurn([{ type: 'tool_result', tool_use_id: 'call_1', is_error: true }])[0].content).toBe('Error');
  });

  it('tool messages come first; the turn’s other blocks and the results’ images follow in one user message', () => {
    const image = { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBO' } };
    expect(
      resultTurn([
        { type: 'text', text: 'and then?' },
        { type: 'tool_result', tool_use_id: 'call_1', content: [{ type: 'text', text: 'a chart:' }, image] },
      ]),
    ).toEqual([
      { role: 'tool', tool_call_id: 'call_1', content: 'a chart:' },
      {
        role: 'user',
        content: [
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBO' } },
          { type: 'text', text: 'and then?' },
        ],
      },
    ]);
  });
});

describe('messagesToChat: assistant turns', () => {
  const assistantTurn = (content: unknown) =>
    messagesToChat({
      ...base,
      messages: [
        { role: 'user', content: 'q' },
        { role: 'assistant', content },
      ],
    }).messages.slice(1);

  it('a string stays a string (a prefill)', () => {
    expect(assistantTurn('The answer is')).toEqual([{ role: 'assistant', content: 'The answer is' }]);
  });

  it('text blocks are joined; tool_use only → content null; thinking kept in thinking_blocks with its signature', () => {
    expect(
      assistantTurn([
        { type: 'thinking', thinking: 'hmm', signature: 'sig' },
        { type: 'redacted_thinking', data: 'EmwKAhgB' },
        { type: 'text', text: 'Let me ' },
        { type: 'text', text: 'look.' },
      ]),
    ).toEqual([
      {
        role: 'assistant',
        content: 'Let me look.',
        thinking_blocks: [
          { type: 'thinking', thinking: 'hmm', signature: 'sig' },
          { type: 'redacted_thinking', data: 'EmwKAhgB' },
        ],
      },
    ]);
    // A translated answer's empty signature is no signature.
    expect(
      assistantTurn([
        { type: 'thinking', thinking: 'hmm', signature: '' },
        { type: 'text', text: 'x' },
      ])[0].thinking_blocks,
    ).toEqual([{ type: 'thinking', thinking: 'hmm' }]);
    expect(assistantTurn([{ type: 'tool_use', id: 't1', name: 'f', input: {} }])).toEqual([
      { role: 'assistant', content: null, tool_calls: [{ id: 't1', type: 'function', function: { name: 'f', arguments: '{}' } }] },
    ]);
  });

  it('a turn of only thinking leaves no message', () => {
    expect(assistantTurn([{ type: 'thinking', thinking: 'hmm', signature: 'sig' }])).toEqual([]);
  });
});

describe('messagesToChat: tools and tool_choice', () => {
  const tool = { name: 'get_weather', description: 'Weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } };

  it('custom tools → function tools (strict and the cache marker kept)', () => {
    expect(chatOf({ tools: [{ ...tool, strict: true, cache_control: { type: 'ephemeral' } }] }).tools).toEqual([
      { type: 'function', function: { name: 'get_weather', description: 'Weather', parameters: tool.input_schema, strict: true }, cache_control: { type: 'ephemeral' } },
    ]);
  });

  it.each([
    ['code_execution_20250825', { type: 'code_execution_20250825', name: 'code_execution' }],
    ['bash_20250124', { type: 'bash_20250124', name: 'bash' }],
    ['text_editor_20250728', { type: 'text_editor_20250728', name: 'str_replace_based_edit_tool' }],
    ['computer_20250124', { type: 'computer_20250124', name: 'computer', display_width_px: 1024, display_height_px: 768 }],
  ])('a %s server tool is dropped as tools[1], naming its type, and the custom tool kept', (type, server) => {
    const { chat, unservable, untranslatable } = translateMessagesRequest({ ...base, messages: [{ role: 'user', content: 'hi' }], tools: [tool, server] });
    expect(unservable).toBeUndefined();
    expect(untranslatable).toEqual([{ field: 'tools[1]', what: type, reason: 'a server tool, run only by Anthropic' }]);
    expect(chat.tools?.map((t) => t.function.name)).toEqual(['get_weather']);
  });

  it('a tool_choice only a dropped server tool could meet goes with it; one for a kept tool stays', () => {
    const web = { type: 'bash_20250124', name: 'bash' };
    const translate = (tools: unknown[], choice: unknown) => translateMessagesRequest({ ...base, messages: [{ role: 'user', content: 'hi' }], tools, tool_choice: choice });
    const named = translate([tool, web], { type: 'tool', name: 'bash' });
    expect(named.chat.tool_choice).toBeUndefined();
    expect(named.untranslatable?.map((d) => [d.field, d.what])).toEqual([
      ['tools[1]', 'bash_20250124'],
      ['tool_choice', 'bash'],
    ]);
    const any = translate([web], { type: 'any' });
    expect(any.chat.tool_choice).toBeUndefined();
    expect(any.untranslatable?.map((d) => d.field)).toEqual(['tools[0]', 'tool_choice']);
    const kept = translate([tool, web], { type: 'any' });
    expect(kept.chat.tool_choice).toBe('required');
    expect(kept.untranslatable?.map((d) => d.field)).toEqual(['tools[1]']);
  });

  it.each([
    [{ type: 'auto' }, 'auto'],
    [{ type: 'any' }, 'required'],
    [{ type: 'none' }, 'none'],
    [
      { type: 'tool', name: 'get_weather' },
      { type: 'function', function: { name: 'get_weather' } },
    ],
  ])('tool_choice %j → %j', (choice, expected) => {
    const chat = chatOf({ tools: [tool], tool_choice: choice });
    expect(chat.tool_choice).toEqual(expected);
    expect(chat.parallel_tool_calls).toBeUndefined();
  });

  it('disable_parallel_tool_use → parallel_tool_calls: false', () => {
    expect(chatOf({ tools: [tool], tool_choice: { type: 'any', disable_parallel_tool_use: true } }).parallel_tool_calls).toBe(false);
    expect(chatOf({ tools: [tool], tool_choice: { type: 'auto', disable_parallel_tool_use: false } }).parallel_tool_calls).toBeUndefined();
  });
});

describe('messagesToChat: parameters', () => {
  it('max_tokens, stop_sequences, temperature, top_p, top_k, metadata.user_id, service_tier', () => {
    const chat = chatOf({ stop_sequences: ['END', '\n\nHuman:'], temperature: 0.3, top_p: 0.9, top_k: 40, metadata: { user_id: 'u-1' }, service_tier: 'standard_only' });
    expect(chat).toMatchObject({ max_completion_tokens: 100, stop: ['END', '\n\nHuman:'], temperature: 0.3, top_p: 0.9, top_k: 40, user: 'u-1', service_tier: 'default' });
    expect(chat.max_tokens).toBeUndefined();
    expect(chatOf({ service_tier: 'auto' }).service_tier).toBe('auto');
    expect(chatOf({ metadata: { user_id: null } }).user).toBeUndefined();
  });

  it('stream: true also asks for the usage chunk', () => {
    expect(chatOf({ stream: true })).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    expect(chatOf({ stream: false }).stream_options).toBeUndefined();
  });

  it('thinking budgets → reasoning_effort; disabled and adaptive → none', () => {
    expect(chatOf({ thinking: { type: 'enabled', budget_tokens: 1024 } }).reasoning_effort).toBe('low');
    expect(chatOf({ thinking: { type: 'enabled', budget_tokens: 8192 } }).reasoning_effort).toBe('medium');
    expect(chatOf({ thinking: { type: 'enabled', budget_tokens: 32000 } }).reasoning_effort).toBe('high');
    expect(chatOf({ thinking: { type: 'disabled' } }).reasoning_effort).toBeUndefined();
    expect(chatOf({ thinking: { type: 'adaptive' } }).reasoning_effort).toBeUndefined();
  });

  it('the budget thresholds: below 4,096 low, below 16,384 medium, else high', () => {
    expect([1024, 4095, 4096, 16383, 16384, 24576].map(effortOfBudget)).toEqual(['low', 'low', 'medium', 'medium', 'high', 'high']);
  });

  it('output_config: effort → reasoning_effort (winning over a budget), format → a json_schema response_format', () => {
    const schema = { type: 'object', properties: { a: { type: 'string' } } };
    const chat = chatOf({ thinking: { type: 'enabled', budget_tokens: 1024 }, output_config: { effort: 'max', format: { type: 'json_schema', schema } } });
    expect(chat.reasoning_effort).toBe('high');
    expect(chat.response_format).toEqual({ type: 'json_schema', json_schema: { name: 'output', schema, strict: true } });
  });

  it("a top-level cache_control is dropped; Anthropic's own fields and unknown ones are dropped and reported, left out of the chat request", () => {
    expect(chatOf({ cache_control: { type: 'ephemeral' } }).cache_control).toBeUndefined();
    const { chat, unservable, untranslatable } = translateMessagesRequest({
      ...base,
      messages: [{ role: 'user', content: 'hi' }],
      context_management: { edits: [{ type: 'clear_tool_uses_20250919' }] },
      container: 'c-1',
      mcp_servers: [],
      inference_geo: 'us',
      a_field_from_next_year: true,
      thinking: { type: 'interleaved' },
    });
    expect(unservable).toBeUndefined();
    expect(untranslatable?.map((d) => d.field)).toEqual(['thinking.type', 'context_management', 'container', 'mcp_servers', 'inference_geo', 'a_field_from_next_year']);
    expect(untranslatable?.every((d) => d.reason.length > 10)).toBe(true);
    for (const name of ['context_management', 'container', 'mcp_servers', 'inference_geo', 'a_field_from_next_year', 'thinking']) expect(chat).not.toHaveProperty(name);
  });

  it('max_tokens 0 (warming the cache) is refused on a translated target', () => {
    const { chat, unservable } = translateMessagesRequest({ ...base, max_tokens: 0, messages: [{ role: 'user', content: 'hi' }] });
    expect(unservable?.map((e) => e.param)).toEqual(['max_tokens']);
    expect(chat.max_completion_tokens).toBeUndefined();
  });

  it.each([{ type: 'create' }, { type: 'continue', previous_message_id: 'msg_1' }])('thread %j is refused with the error_code the Anthropic SDK falls back on', (thread) => {
    const { unservable } = translateMessagesRequest({ ...base, messages: [{ role: 'user', content: 'hi' }], thread });
    expect(unservable).toHaveLength(1);
    expect(unservable?.[0]).toMatchObject({ code: 'unsupported_parameter', param: 'thread', details: { error_code: 'thread_unsupported_request' } });
  });

  it.each([
    ['an image from the Files API', [{ type: 'image', source: { type: 'file', file_id: 'file_1' } }], 'messages[0].content[0].source'],
    ['a PDF by URL', [{ type: 'document', source: { type: 'url', url: 'https://example.com/a.pdf' } }], 'messages[0].content[0].source'],
    ['a search result', [{ type: 'search_result', source: 's', title: 't', content: [] }], 'messages[0].content[0]'],
  ])('%s is native-only', (_what, content, param) => {
    const error = errorOf({ ...base, messages: [{ role: 'user', content }] });
    expect([error.code, error.param]).toEqual(['unsupported_parameter', param]);
  });

  it('server-tool blocks in the history are native-only (a past web search is skipped: its answer holds what it found)', () => {
    const error = errorOf({
      ...base,
      messages: [
        { role: 'user', content: 'q' },
        { role: 'assistant', content: [{ type: 'server_tool_use', id: 'srvtoolu_1', name: 'code_execution', input: { code: 'x' } }] },
      ],
    });
    expect([error.code, error.param]).toEqual(['unsupported_parameter', 'messages[1].content[0]']);
    const searched = translateMessagesRequest({
      ...base,
      messages: [
        { role: 'user', content: 'q' },
        {
          role: 'assistant',
          content: [
            { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'x' } },
            { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [] },
            { type: 'text', text: 'Found it.' },
          ],
        },
        { role: 'user', content: 'thanks' },
      ],
    });
    expect(searched.unservable).toBeUndefined();
    expect(searched.chat.messages[1]).toEqual({ role: 'assistant', content: 'Found it.' });
  });

  it('a web search server tool is the gateway web_search extension, its settings kept', () => {
    const server = { type: 'web_search_20250305', name: 'web_search', max_uses: 3, blocked_domains: ['example.com'], user_location: { type: 'approximate', city: 'Paris', country: 'FR' } };
    const weather = { name: 'get_weather', input_schema: { type: 'object', properties: {} } };
    const { chat, untranslatable } = translateMessagesRequest({ ...base, messages: [{ role: 'user', content: 'hi' }], tools: [weather, server] });
    expect(untranslatable).toBeUndefined();
    expect(chat.web_search).toEqual({ field: 'tools[1]', what: 'web_search_20250305', max_uses: 3, blocked_domains: ['example.com'], user_location: { city: 'Paris', country: 'FR' } });
    expect(chat.tools?.map((t) => t.function.name)).toEqual(['get_weather']);
  });
});

describe('messagesToChat: bad input is a 400 naming the field', () => {
  const ok = { ...base, messages: [{ role: 'user', content: 'hi' }] };
  it.each<[string, unknown, string, string | null]>([
    ['not an object', [1, 2], 'invalid_request', null],
    ['no model', { max_tokens: 1, messages: [] }, 'missing_required_parameter', 'model'],
    ['no max_tokens', { model: 'm', messages: [] }, 'missing_required_parameter', 'max_tokens'],
    ['no messages', { model: 'm', max_tokens: 1 }, 'missing_required_parameter', 'messages'],
    ['model not a string', { ...ok, model: 5 }, 'invalid_request', 'model'],
    ['max_tokens a fraction', { ...ok, max_tokens: 1.5 }, 'invalid_request', 'max_tokens'],
    ['max_tokens a string', { ...ok, max_tokens: '10' }, 'invalid_request', 'max_tokens'],
    ['messages empty', { ...ok, messages: [] }, 'invalid_request', 'messages'],
    ['messages not an array', { ...ok, messages: 'hi' }, 'invalid_request', 'messages'],
    ['a message not an object', { ...ok, messages: ['hi'] }, 'invalid_request', 'messages[0]'],
    ['an unknown role', { ...ok, messages: [{ role: 'tool', content: 'x' }] }, 'invalid_request', 'messages[0].role'],
    ['content missing', { ...ok, messages: [{ role: 'user' }] }, 'invalid_request', 'messages[0].content'],
    ['a text block without text', { ...ok, messages: [{ role: 'user', content: [{ type: 'text' }] }] }, 'invalid_request', 'messages[0].content[0].text'],
    ['an unknown block type', { ...ok, messages: [{ role: 'user', content: [{ type: 'video' }] }] }, 'invalid_request', 'messages[0].content[0].type'],
    ['an image without a source', { ...ok, messages: [{ role: 'user', content: [{ type: 'image' }] }] }, 'invalid_request', 'messages[0].content[0].source'],
    [
      'base64 image without data',
      { ...ok, messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png' } }] }] },
      'invalid_request',
      'messages[0].content[0].source.data',
    ],
    [
      'a non-PDF base64 document',
      { ...ok, messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'base64', media_type: 'image/png', data: 'x' } }] }] },
      'invalid_request',
      'messages[0].content[0].source.media_type',
    ],
    ['tool_use in a user turn', { ...ok, messages: [{ role: 'user', content: [{ type: 'tool_use', id: 'a', name: 'b', input: {} }] }] }, 'invalid_request', 'messages[0].content[0].type'],
    ['tool_result without an id', { ...ok, messages: [{ role: 'user', content: [{ type: 'tool_result', content: 'x' }] }] }, 'invalid_request', 'messages[0].content[0].tool_use_id'],
    [
      'tool_use input not an object',
      { ...ok, messages: [ok.messages[0], { role: 'assistant', content: [{ type: 'tool_use', id: 'a', name: 'b', input: [1] }] }] },
      'invalid_request',
      'messages[1].content[0].input',
    ],
    ['an image in an assistant turn', { ...ok, messages: [ok.messages[0], { role: 'assistant', content: [{ type: 'image', source: {} }] }] }, 'invalid_request', 'messages[1].content[0].type'],
    ['system a number', { ...ok, system: 5 }, 'invalid_request', 'system'],
    ['a system block not text', { ...ok, system: [{ type: 'image' }] }, 'invalid_request', 'system[0].type'],
    ['stop_sequences a string', { ...ok, stop_sequences: 'END' }, 'invalid_request', 'stop_sequences'],
    ['a stop sequence not a string', { ...ok, stop_sequences: ['a', 1] }, 'invalid_request', 'stop_sequences[1]'],
    ['temperature above 1', { ...ok, temperature: 1.5 }, 'invalid_request', 'temperature'],
    ['top_p a string', { ...ok, top_p: '0.9' }, 'invalid_request', 'top_p'],
    ['top_k negative', { ...ok, top_k: -1 }, 'invalid_request', 'top_k'],
    ['metadata an array', { ...ok, metadata: [] }, 'invalid_request', 'metadata'],
    ['user_id a number', { ...ok, metadata: { user_id: 7 } }, 'invalid_request', 'metadata.user_id'],
    ['stream a string', { ...ok, stream: 'yes' }, 'invalid_request', 'stream'],
    ['tools not an array', { ...ok, tools: {} }, 'invalid_request', 'tools'],
    ['a tool without input_schema', { ...ok, tools: [{ name: 'f' }] }, 'invalid_request', 'tools[0].input_schema'],
    ['a tool without a name', { ...ok, tools: [{ input_schema: {} }] }, 'invalid_request', 'tools[0].name'],
    ['tool_choice a string', { ...ok, tool_choice: 'auto' }, 'invalid_request', 'tool_choice'],
    ['tool_choice of an unknown type', { ...ok, tool_choice: { type: 'some' } }, 'invalid_request', 'tool_choice.type'],
    ['tool_choice tool without a name', { ...ok, tool_choice: { type: 'tool' } }, 'invalid_request', 'tool_choice.name'],
    ['disable_parallel_tool_use a string', { ...ok, tool_choice: { type: 'auto', disable_parallel_tool_use: 'yes' } }, 'invalid_request', 'tool_choice.disable_parallel_tool_use'],
    ['thinking enabled without a budget', { ...ok, thinking: { type: 'enabled' } }, 'invalid_request', 'thinking.budget_tokens'],
    ['thinking without a type', { ...ok, thinking: {} }, 'invalid_request', 'thinking.type'],
    ['an unknown service_tier', { ...ok, service_tier: 'priority' }, 'invalid_request', 'service_tier'],
    ['an unknown effort', { ...ok, output_config: { effort: 'extreme' } }, 'invalid_request', 'output_config.effort'],
    ['a format without a schema', { ...ok, output_config: { format: { type: 'json_schema' } } }, 'invalid_request', 'output_config.format.schema'],
  ])('%s', (_what, body, code, param) => {
    const error = errorOf(body);
    expect(error.code).toBe(code);
    expect(error.status).toBe(400);
    expect(error.param).toBe(param);
    if (param) expect(error.message).toContain(`'${param}'`);
  });
});
