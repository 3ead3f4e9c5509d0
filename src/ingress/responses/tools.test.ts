/** Responses tools → chat functions: namespaces flattened, custom tools as one string, platform tools dropped; Codex's requests as its source builds them. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { expectValid } from 'switchyard-gateway/kit/testing';
import { readResponsesRequest, responsesToChat } from './request.ts';
import { chatNameOf, flatName, ToolReading } from './tools.ts';

const CODEX = new URL('../../../test/fixtures/codex/', import.meta.url);
const codexRequest = (name: string): Record<string, unknown> => JSON.parse(readFileSync(new URL(`${name}.request.json`, CODEX), 'utf8'));

const fn = (name: string, extra: Record<string, unknown> = {}) => ({ type: 'function', name, parameters: { type: 'object', properties: {} }, ...extra });

function read(tools: unknown[]): ToolReading {
  const reading = new ToolReading();
  reading.read(tools, 'tools');
  return reading;
}

describe('namespaces', () => {
  it('each tool becomes <namespace>__<name>, the namespace description leading its own; calls map back by the table', () => {
    const reading = read([{ type: 'namespace', name: 'crm', description: 'Customer records.', tools: [fn('list_orders', { description: 'Open orders.' }), fn('get_customer')] }]);
    expect(reading.callables.map((c) => [c.chatName, c.name, c.namespace])).toEqual([
      ['crm__list_orders', 'list_orders', 'crm'],
      ['crm__get_customer', 'get_customer', 'crm'],
    ]);
    expect(reading.callables[0].tool).toEqual({
      type: 'function',
      function: { name: 'crm__list_orders', description: 'Customer records.\n\nOpen orders.', parameters: { type: 'object', properties: {} } },
    });
    expect(reading.callables[1].tool.function.description).toBe('Customer records.');
    expect(chatNameOf(reading.callables, 'get_customer', 'crm')).toBe('crm__get_customer');
  });

  it('the default namespace `functions` keeps bare names, and its calls carry no namespace', () => {
    const reading = read([{ type: 'namespace', name: 'functions', description: '', tools: [fn('exec_command')] }]);
    expect(reading.callables).toEqual([expect.objectContaining({ chatName: 'exec_command', name: 'exec_command' })]);
    expect(reading.callables[0]).not.toHaveProperty('namespace');
    expect(chatNameOf(reading.callables, 'exec_command', 'functions')).toBe('exec_command');
    expect(chatNameOf(reading.callables, 'exec_command')).toBe('exec_command');
  });

  it('a name no provider takes (too long, a dot) is cut and hashed, the same way every time; a clash hashes the second', () => {
    const ns = 'mcp__codex_apps__google_calendar_for_workspace_accounts';
    const reading = read([
      { type: 'namespace', name: ns, description: '', tools: [fn('create_event_with_attendees')] },
      { type: 'namespace', name: 'a.b', description: '', tools: [fn('c')] },
      fn('crm__list'),
      { type: 'namespace', name: 'crm', description: '', tools: [fn('list')] },
    ]);
    const names = reading.callables.map((c) => c.chatName);
    for (const name of names) expect(name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
    expect(names[0]).toMatch(/^mcp__codex_apps__google_calendar_for_workspace_accounts_[0-9a-f]{8}$/);
    expect(names[0]).toBe(flatName('create_event_with_attendees', ns));
    expect(names[1]).toMatch(/^a_b__c_[0-9a-f]{8}$/);
    expect(names[2]).toBe('crm__list');
    expect(names[3]).toMatch(/^crm__list_[0-9a-f]{8}$/);
    expect(new Set(names).size).toBe(4);
    expect(chatNameOf(reading.callables, 'list', 'crm')).toBe(names[3]);
  });
});

describe('custom (freeform) tools', () => {
  it('a function of one string `input`, the grammar in the description; without a format, free text', () => {
    const reading = read([
      { type: 'custom', name: 'apply_patch', description: 'Edit files.', format: { type: 'grammar', syntax: 'lark', definition: 'start: "x"+' } },
      { type: 'custom', name: 'shout', format: { type: 'grammar', syntax: 'regex', definition: '[A-Z]+' } },
      { type: 'custom', name: 'note' },
    ]);
    const [patch, shout, note] = reading.callables;
    expect(patch).toMatchObject({ chatName: 'apply_patch', kind: 'custom', name: 'apply_patch' });
    expect(patch.tool.function.parameters).toEqual({ type: 'object', properties: { input: { type: 'string' } }, required: ['input'], additionalProperties: false });
    expect(patch.tool.function.description).toBe('Edit files.\n\nIts `input` is text that must be a sentence of this lark grammar, sent as it is (not JSON):\nstart: "x"+');
    expect(shout.tool.function.description).toMatch(/must match this regular expression.*\n\[A-Z\]\+$/s);
    expect(note.tool.function.description).toBe('Its `input` is free text, sent as it is (not JSON).');
  });
});

describe('platform tools: dropped and reported, never a 400', () => {
  it('hosted tools, tools with items of their own and unknown types name their place and type', () => {
    const reading = read([
      fn('f'),
      { type: 'file_search' },
      { type: 'local_shell' },
      { type: 'teleport' },
      { type: 'namespace', name: 'n', description: '', tools: [{ type: 'image_generation' }, fn('g')] },
    ]);
    expect(reading.callables.map((c) => c.chatName)).toEqual(['f', 'n__g']);
    expect(reading.drops).toEqual([
      { field: 'tools[1]', what: 'file_search', reason: expect.stringMatching(/OpenAI's platform/) },
      { field: 'tools[2]', what: 'local_shell', reason: expect.any(String) },
      { field: 'tools[3]', what: 'teleport', reason: expect.stringMatching(/not known/) },
      { field: 'tools[4].tools[0]', what: 'image_generation', reason: expect.any(String) },
    ]);
  });
});

describe("Codex's requests, as its source builds them", () => {
  it('Responses Lite: tools from the additional_tools item, instructions empty; client_metadata and web_search dropped and reported', () => {
    const body = codexRequest('responses-lite');
    const { client_metadata: _, ...schemaChecked } = body;
    expectValid('CreateResponse', schemaChecked);
    const request = readResponsesRequest(body);
    expect(request.untranslatable).toEqual([
      { field: 'client_metadata', reason: expect.stringMatching(/OpenAI's own records/) },
      { field: 'input[0].tools[2]', what: 'web_search', reason: expect.any(String) },
    ]);
    const chat = responsesToChat(body);
    expectValid('CreateChatCompletionRequest', chat);
    expect(chat.tools?.map((t) => t.function.name)).toEqual(['apply_patch', 'exec_command', 'mcp__files__write_file']);
    expect(chat.messages).toEqual([
      { role: 'developer', content: [{ type: 'text', text: "You are Codex, a coding agent. Work in the user's repository." }] },
      { role: 'user', content: [{ type: 'text', text: 'Create hello.txt containing: hello from codex' }] },
    ]);
    expect(chat).toMatchObject({ tool_choice: 'auto', parallel_tool_calls: false, reasoning_effort: 'medium', stream: true, prompt_cache_key: expect.any(String), verbosity: 'low' });
    expect(request.tools.map((t) => t.type)).toEqual(['namespace', 'namespace']);
  });

  it('the classic shape: the same tools from `tools`', () => {
    const body = codexRequest('responses-classic');
    const { client_metadata: _, ...schemaChecked } = body;
    expectValid('CreateResponse', schemaChecked);
    const chat = responsesToChat(body);
    expect(chat.tools?.map((t) => t.function.name)).toEqual(['apply_patch', 'exec_command', 'mcp__files__write_file']);
    expect(chat.messages[0]).toEqual({ role: 'system', content: "You are Codex, a coding agent. Work in the user's repository." });
    expect(readResponsesRequest(body).untranslatable.map((d) => d.field)).toEqual(['client_metadata', 'tools[3]']);
  });

  it('a second turn: the namespaced function_call, the custom_tool_call and their outputs become the chat tool round trip', () => {
    const body = codexRequest('responses-lite');
    const input = body.input as unknown[];
    body.input = [
      ...input,
      { type: 'custom_tool_call', id: 'ctc_1', status: 'completed', call_id: 'call_p', name: 'apply_patch', input: '*** Begin Patch\n*** Add File: hello.txt\n+hello from codex\n*** End Patch\n' },
      { type: 'function_call', id: 'fc_2', call_id: 'call_w', name: 'write_file', namespace: 'mcp__files', arguments: '{"path":"a","content":"b"}' },
      { type: 'custom_tool_call_output', call_id: 'call_p', output: 'Success. Updated the following files:\nA hello.txt\n' },
      { type: 'function_call_output', call_id: 'call_w', output: [{ type: 'input_text', text: 'written' }] },
    ];
    const chat = responsesToChat(body);
    expect(chat.messages.slice(2)).toEqual([
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_p', type: 'function', function: { name: 'apply_patch', arguments: JSON.stringify({ input: '*** Begin Patch\n*** Add File: hello.txt\n+hello from codex\n*** End Patch\n' }) } },
          { id: 'call_w', type: 'function', function: { name: 'mcp__files__write_file', arguments: '{"path":"a","content":"b"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_p', content: 'Success. Updated the following files:\nA hello.txt\n' },
      { role: 'tool', tool_call_id: 'call_w', content: [{ type: 'text', text: 'written' }] },
    ]);
  });
});

describe('tool outputs with images (Codex view_image)', () => {
  it('the text stays in the tool message; the images follow in a user message after the run of outputs', () => {
    const image = 'data:image/png;base64,iVBORw0KGgo=';
    const chat = responsesToChat({
      model: 'm',
      input: [
        { role: 'user', content: 'Look at a.png and b.png' },
        { type: 'function_call', call_id: 'c1', name: 'view_image', arguments: '{"path":"a.png"}' },
        { type: 'function_call', call_id: 'c2', name: 'view_image', arguments: '{"path":"b.png"}' },
        { type: 'function_call_output', call_id: 'c1', output: [{ type: 'input_image', image_url: image }] },
        {
          type: 'custom_tool_call_output',
          call_id: 'c2',
          output: [
            { type: 'input_text', text: 'b.png:' },
            { type: 'input_image', image_url: image, detail: 'high' },
          ],
        },
        { role: 'user', content: 'Which is bigger?' },
      ],
      tools: [{ type: 'function', name: 'view_image', parameters: { type: 'object', properties: { path: { type: 'string' } } } }],
    });
    expectValid('CreateChatCompletionRequest', chat);
    expect(chat.messages.slice(2)).toEqual([
      { role: 'tool', tool_call_id: 'c1', content: 'The output is in the next message.' },
      { role: 'tool', tool_call_id: 'c2', content: [{ type: 'text', text: 'b.png:' }] },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'The output of tool call c1:' },
          { type: 'image_url', image_url: { url: image } },
          { type: 'text', text: 'The output of tool call c2:' },
          { type: 'image_url', image_url: { url: image, detail: 'high' } },
        ],
      },
      { role: 'user', content: 'Which is bigger?' },
    ]);
  });
});

describe('client tool search (execution: client)', () => {
  const search = { type: 'tool_search', execution: 'client', description: 'Find more tools.', parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] } };

  it('is the tool_search function; a server one is dropped', () => {
    const reading = read([search, { type: 'tool_search' }]);
    expect(reading.callables).toEqual([
      {
        chatName: 'tool_search',
        kind: 'tool_search',
        name: 'tool_search',
        tool: { type: 'function', function: { name: 'tool_search', description: 'Find more tools.', parameters: search.parameters } },
      },
    ]);
    expect(reading.drops).toEqual([{ field: 'tools[1]', what: 'tool_search', reason: expect.any(String) }]);
  });

  it('the past call and its output: the chat round trip, and the loaded tools offered', () => {
    const loaded = {
      type: 'namespace',
      name: 'mcp__calendar',
      description: 'Calendar.',
      tools: [{ type: 'function', name: 'create_event', defer_loading: true, parameters: { type: 'object', properties: {} } }],
    };
    const body = {
      model: 'm',
      input: [
        { role: 'user', content: 'Book lunch' },
        { type: 'tool_search_call', call_id: 'ts_1', execution: 'client', status: 'completed', arguments: { query: 'calendar' } },
        { type: 'tool_search_output', call_id: 'ts_1', execution: 'client', status: 'completed', tools: [loaded] },
      ],
      tools: [search],
    };
    const request = readResponsesRequest(body);
    expect(request.untranslatable).toEqual([]);
    const chat = responsesToChat(body);
    expect(chat.tools?.map((t) => t.function.name)).toEqual(['tool_search', 'mcp__calendar__create_event']);
    expect(chat.messages.slice(1)).toEqual([
      { role: 'assistant', content: null, tool_calls: [{ id: 'ts_1', type: 'function', function: { name: 'tool_search', arguments: '{"query":"calendar"}' } }] },
      { role: 'tool', tool_call_id: 'ts_1', content: 'Tools loaded, now callable: mcp__calendar__create_event.' },
    ]);
  });
});

describe('the request Codex CLI 0.171.0 sent (recorded, long strings trimmed)', () => {
  it('reads with only client_metadata dropped: its namespaces flattened, exec a custom tool, the developer messages kept', () => {
    const body = codexRequest('responses-lite-0.171.0');
    const request = readResponsesRequest(body);
    expect(request.untranslatable.map((d) => d.field)).toEqual(['client_metadata']);
    const chat = responsesToChat(body);
    expect(chat.tools?.map((t) => t.function.name)).toEqual([
      'exec',
      'wait',
      'request_user_input',
      'request_user_input_async',
      'send_message_to_user_async',
      'clock__sleep',
      'collaboration__followup_task',
      'collaboration__interrupt_agent',
      'collaboration__list_agents',
      'collaboration__send_message',
      'collaboration__spawn_agent',
      'collaboration__wait_agent',
    ]);
    expect(request.callables[0]).toMatchObject({ kind: 'custom', name: 'exec' });
    expect(request.callables.find((c) => c.chatName === 'collaboration__spawn_agent')).toMatchObject({ kind: 'function', name: 'spawn_agent', namespace: 'collaboration' });
    expect(chat.messages.map((m) => m.role)).toEqual(['developer', 'developer', 'developer', 'developer', 'user', 'user']);
    expect(chat).toMatchObject({ stream: true, tool_choice: 'auto', parallel_tool_calls: false, reasoning_effort: 'low', verbosity: 'low' });
  });
});
