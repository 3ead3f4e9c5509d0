/** Chat tool calls → the items the client's tools call for: namespaced function_call, custom_tool_call; a custom input decoded as it streams. */
import { describe, expect, it } from 'vitest';
import { CustomInputDecoder, callItemOf, customInputOf } from './calls.ts';
import { responseIds } from './ids.ts';
import { ToolReading } from './tools.ts';

const reading = new ToolReading();
reading.read(
  [
    { type: 'custom', name: 'apply_patch' },
    {
      type: 'namespace',
      name: 'mcp__files',
      description: '',
      tools: [
        { type: 'function', name: 'write_file' },
        { type: 'custom', name: 'append' },
      ],
    },
  ],
  'tools',
);
const ids = responseIds('req_1', 1700000000, () => 1700000001);

describe('callItemOf', () => {
  it('a namespaced function is a function_call with its bare name and namespace', () => {
    expect(callItemOf(reading.callables, 'mcp__files__write_file', ids, 2, 'call_1')).toEqual({
      type: 'function_call',
      id: 'fc_req_1_2',
      call_id: 'call_1',
      name: 'write_file',
      namespace: 'mcp__files',
      arguments: '',
      status: 'in_progress',
    });
  });

  it('a custom tool is a custom_tool_call (namespaced too); an unknown name stays a function_call of that name', () => {
    expect(callItemOf(reading.callables, 'apply_patch', ids, 0, 'call_2')).toEqual({
      type: 'custom_tool_call',
      id: 'ctc_req_1_0',
      call_id: 'call_2',
      name: 'apply_patch',
      input: '',
      status: 'in_progress',
    });
    expect(callItemOf(reading.callables, 'mcp__files__append', ids, 1, undefined)).toMatchObject({ type: 'custom_tool_call', name: 'append', namespace: 'mcp__files', call_id: 'call_ctc_req_1_1' });
    expect(callItemOf(reading.callables, 'invented', ids, 0, 'c')).toMatchObject({ type: 'function_call', name: 'invented' });
  });
});

describe('customInputOf', () => {
  it.each([
    ['{"input":"*** Begin Patch\\n"}', '*** Begin Patch\n'],
    ['{"patch":"x"}', 'x'],
    ['{"input":{"a":1}}', '{"a":1}'],
    ['"bare"', 'bare'],
    ['not json at all', 'not json at all'],
    ['{"a":"1","b":"2"}', '{"a":"1","b":"2"}'],
  ])('%s → %j', (args, input) => {
    expect(customInputOf(args)).toBe(input);
  });
});

describe('CustomInputDecoder', () => {
  it('decodes the input string as fragments arrive, escapes split anywhere, a character never split', () => {
    const input = 'line "one"\n\ttab \\ back — ünï 😀 end';
    const args = JSON.stringify({ input }).replace('😀', '\\ud83d\\ude00');
    for (const size of [1, 2, 3, 7, args.length]) {
      const decoder = new CustomInputDecoder();
      const deltas: string[] = [];
      for (let i = 0; i < args.length; i += size) deltas.push(decoder.push(args.slice(i, i + size)));
      expect(deltas.join('')).toBe(input);
      expect(decoder.text).toBe(input);
      for (const d of deltas) expect(d.length === 0 || !/[\ud800-\udbff]$/.test(d)).toBe(true);
    }
  });

  it('whitespace before the key is fine; another shape yields nothing (the done event carries it)', () => {
    const spaced = new CustomInputDecoder();
    expect(spaced.push('{ "input" : "a')).toBe('a');
    const other = new CustomInputDecoder();
    expect(other.push('{"patch": "abc"}')).toBe('');
    expect(other.push(' '.repeat(80))).toBe('');
  });
});
