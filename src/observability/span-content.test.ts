import { expect, it } from 'vitest';
import type { ChatCompletion } from '../openai-types.ts';
import { inputMessages, outputMessages } from './span-content.ts';

it('writes the chat history as role and typed parts, naming inline media without copying it', () => {
  const text = inputMessages([
    {
      role: 'user',
      content: [
        { type: 'text', text: 'what is this?' },
        { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
        { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
      ],
    },
    { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'look', arguments: '{"x":1}' } }] },
    { role: 'tool', tool_call_id: 'c1', content: 'a cat' },
  ]);
  expect(JSON.parse(text!)).toEqual([
    {
      role: 'user',
      parts: [
        { type: 'text', content: 'what is this?' },
        { type: 'blob', modality: 'image' },
        { type: 'uri', modality: 'image', uri: 'https://example.com/a.png' },
      ],
    },
    { role: 'assistant', parts: [{ type: 'tool_call', id: 'c1', name: 'look', arguments: { x: 1 } }] },
    { role: 'tool', parts: [{ type: 'tool_call_response', id: 'c1', result: 'a cat' }] },
  ]);
  expect(text).not.toContain('AAAA');
  expect(inputMessages('not a list')).toBeUndefined();
});

it('writes the answer of a completion or of a stream with its finish reason', () => {
  const completion: ChatCompletion = {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1,
    model: 'm',
    choices: [{ index: 0, message: { role: 'assistant', content: 'Paris.', refusal: null }, logprobs: null, finish_reason: 'stop' }],
  };
  expect(JSON.parse(outputMessages(completion, undefined)!)).toEqual([{ role: 'assistant', parts: [{ type: 'text', content: 'Paris.' }], finish_reason: 'stop' }]);
  expect(JSON.parse(outputMessages(undefined, { text: ['Hello'], finishReasons: ['length'] })!)).toEqual([{ role: 'assistant', parts: [{ type: 'text', content: 'Hello' }], finish_reason: 'length' }]);
});
