import { describe, expect, it } from 'vitest';
import type { GatewayError } from '../../errors.ts';
import { translateGenerateContent } from './request.ts';
import { jsonSchemaOf } from './schema.ts';

const user = (text: string) => ({ role: 'user', parts: [{ text }] });
const translate = (body: Record<string, unknown>, stream = false) => translateGenerateContent({ contents: [user('hi')], ...body }, 'alias', stream);

describe('contents and systemInstruction', () => {
  it('a system message, user text as a string, model text; turns without a role are user turns', () => {
    const { chat } = translate({
      systemInstruction: { parts: [{ text: 'Be brief.' }, { text: 'Be kind.' }] },
      contents: [{ parts: [{ text: 'Hi ' }, { text: 'there' }] }, { role: 'model', parts: [{ text: 'Hello' }] }],
    });
    expect(chat).toEqual({
      model: 'alias',
      messages: [
        { role: 'system', content: 'Be brief.\nBe kind.' },
        { role: 'user', content: 'Hi there' },
        { role: 'assistant', content: 'Hello' },
      ],
    });
  });

  it('media: inline images as data URLs, wav as input_audio, a PDF as a file, image links as URLs; other links cannot be served translated', () => {
    const { chat, drops, unservable } = translate({
      contents: [
        {
          role: 'user',
          parts: [
            { text: 'Look' },
            { inlineData: { mimeType: 'image/png', data: 'iVBOR' } },
            { inlineData: { mimeType: 'audio/wav', data: 'UklGR' } },
            { inlineData: { mimeType: 'application/pdf', data: 'JVBER' } },
            { fileData: { mimeType: 'image/jpeg', fileUri: 'https://example.com/a.jpg' } },
            { fileData: { mimeType: 'video/mp4', fileUri: 'https://generativelanguage.googleapis.com/v1beta/files/abc' } },
          ],
        },
      ],
    });
    expect(chat.messages[0].content).toEqual([
      { type: 'text', text: 'Look' },
      { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBOR' } },
      { type: 'input_audio', input_audio: { data: 'UklGR', format: 'wav' } },
      { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBER', filename: 'contents-0-parts-3-.pdf' } },
      { type: 'image_url', image_url: { url: 'https://example.com/a.jpg' } },
    ]);
    expect(drops).toEqual([]);
    expect(unservable).toEqual([{ field: 'contents[0].parts[5].fileData', what: 'video/mp4', reason: 'only images at http(s) URLs have a chat form' }]);
  });

  it('function calls keep their ids and thought signatures; responses answer them by id, or by name when they have none', () => {
    const { chat } = translate({
      contents: [
        user('Write two files'),
        {
          role: 'model',
          parts: [
            { thought: true, text: 'planning', thoughtSignature: 'sig-text' },
            { functionCall: { id: 'write_file__a1', name: 'write_file', args: { path: 'a' } }, thoughtSignature: 'sig-1' },
            { functionCall: { name: 'write_file', args: { path: 'b' } } },
          ],
        },
        {
          role: 'user',
          parts: [
            { functionResponse: { name: 'write_file', response: { output: 'b done' } } },
            { functionResponse: { id: 'write_file__a1', name: 'write_file', response: { output: 'a done' } } },
            { text: 'Next?' },
          ],
        },
      ],
    });
    expect(chat.messages.slice(1)).toEqual([
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'write_file__a1', type: 'function', function: { name: 'write_file', arguments: '{"path":"a"}' }, extra_content: { google: { thought_signature: 'sig-1' } } },
          { id: 'call_1_2', type: 'function', function: { name: 'write_file', arguments: '{"path":"b"}' } },
        ],
      },
      // The response with an id claims its call first; the one without takes the other open call of its name.
      { role: 'tool', tool_call_id: 'call_1_2', content: '{"output":"b done"}' },
      { role: 'tool', tool_call_id: 'write_file__a1', content: '{"output":"a done"}' },
      { role: 'user', content: 'Next?' },
    ]);
  });

  it('media a function returned follow the tool results in the user message', () => {
    const { chat } = translate({
      contents: [
        { role: 'model', parts: [{ functionCall: { id: 'c1', name: 'read_file', args: {} } }] },
        { role: 'user', parts: [{ functionResponse: { id: 'c1', name: 'read_file', response: { output: 'an image' }, parts: [{ inlineData: { mimeType: 'image/png', data: 'iVBOR' } }] } }] },
      ],
    });
    expect(chat.messages.slice(1)).toEqual([
      { role: 'tool', tool_call_id: 'c1', content: '{"output":"an image"}' },
      { role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,iVBOR' } }] },
    ]);
  });

  it('a functionResponse that answers no call is a 400 naming it', () => {
    expect(() => translate({ contents: [{ role: 'user', parts: [{ functionResponse: { name: 'ghost', response: {} } }] }] })).toThrow(
      expect.objectContaining({ code: 'invalid_request', param: 'contents[0].parts[0].functionResponse' }),
    );
  });

  it('malformed input is a 400 naming the field', () => {
    const errorOf = (body: unknown) => {
      try {
        translateGenerateContent(body, 'alias', false);
      } catch (err) {
        return err as GatewayError;
      }
      throw new Error('expected a 400');
    };
    expect(errorOf({})).toMatchObject({ code: 'missing_required_parameter', param: 'contents' });
    expect(errorOf({ contents: [{ role: 'tool', parts: [] }] })).toMatchObject({ param: 'contents[0].role' });
    expect(errorOf({ contents: [{ parts: [{ inlineData: { data: 'x' } }] }] })).toMatchObject({ param: 'contents[0].parts[0].inlineData.mimeType' });
    expect(errorOf({ contents: [user('x')], generationConfig: { temperature: 'hot' } })).toMatchObject({ param: 'generationConfig.temperature' });
  });
});

describe('generationConfig', () => {
  it('sampling, limits, stops, candidates and logprobs map to chat names; int64 strings are taken', () => {
    const { chat } = translate({
      generationConfig: {
        temperature: 1,
        topP: 0.95,
        topK: 64,
        maxOutputTokens: '256',
        stopSequences: ['END'],
        seed: 7,
        candidateCount: 2,
        presencePenalty: 0.1,
        frequencyPenalty: 0.2,
        responseLogprobs: true,
        logprobs: 3,
      },
    });
    expect(chat).toMatchObject({
      temperature: 1,
      top_p: 0.95,
      top_k: 64,
      max_completion_tokens: 256,
      stop: ['END'],
      seed: 7,
      n: 2,
      presence_penalty: 0.1,
      frequency_penalty: 0.2,
      logprobs: true,
      top_logprobs: 3,
    });
  });

  it('JSON output: a JSON Schema as is, Gemini Schema converted, a bare JSON mime type as json_object', () => {
    const schema = { type: 'object', properties: { a: { type: 'string' } } };
    expect(translate({ generationConfig: { responseMimeType: 'application/json', responseJsonSchema: schema } }).chat.response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'response', schema },
    });
    expect(
      translate({ generationConfig: { responseMimeType: 'application/json', responseSchema: { type: 'OBJECT', properties: { a: { type: 'STRING', nullable: true } }, propertyOrdering: ['a'] } } }).chat
        .response_format,
    ).toEqual({
      type: 'json_schema',
      json_schema: { name: 'response', schema: { type: 'object', properties: { a: { type: ['string', 'null'] } } } },
    });
    expect(translate({ generationConfig: { responseMimeType: 'application/json' } }).chat.response_format).toEqual({ type: 'json_object' });
  });

  it('thinking: a level or a budget becomes an effort, -1 leaves it to the target, includeThoughts is kept for the answer', () => {
    expect(translate({ generationConfig: { thinkingConfig: { thinkingLevel: 'HIGH', includeThoughts: true } } })).toMatchObject({ chat: { reasoning_effort: 'high' }, includeThoughts: true });
    expect(translate({ generationConfig: { thinkingConfig: { thinkingBudget: 8192 } } })).toMatchObject({ chat: { reasoning_effort: 'medium' }, includeThoughts: false });
    expect(translate({ generationConfig: { thinkingConfig: { thinkingBudget: 0 } } }).chat.reasoning_effort).toBe('none');
    expect(translate({ generationConfig: { thinkingConfig: { thinkingBudget: -1 } } }).chat.reasoning_effort).toBeUndefined();
  });

  it('a stream asks for the usage chunk', () => {
    expect(translate({}, true).chat).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });
});

describe('tools and what is dropped', () => {
  it('function declarations become function tools; googleSearch the web_search extension; other hosted tools, safetySettings and unknown fields are dropped, a cache and an image answer cannot be served', () => {
    const { chat, drops, unservable } = translate({
      tools: [
        {
          functionDeclarations: [
            { name: 'a', parameters: { type: 'OBJECT', properties: { x: { type: 'INTEGER' } } } },
            { name: 'b', description: 'B', parametersJsonSchema: { type: 'object' } },
            { name: 'c' },
          ],
        },
        { googleSearch: {} },
        { codeExecution: {} },
      ],
      toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['a', 'b'] } },
      safetySettings: [{ category: 'HARM_CATEGORY_HATE_SPEECH', threshold: 'BLOCK_NONE' }],
      cachedContent: 'cachedContents/abc',
      generationConfig: { responseModalities: ['TEXT', 'IMAGE'], speechConfig: {} },
      futureField: true,
    });
    expect(chat.tools).toEqual([
      { type: 'function', function: { name: 'a', parameters: { type: 'object', properties: { x: { type: 'integer' } } } } },
      { type: 'function', function: { name: 'b', description: 'B', parameters: { type: 'object' } } },
    ]);
    expect(chat.tool_choice).toBe('required');
    expect(chat.web_search).toEqual({ field: 'tools[1]', what: 'googleSearch' });
    expect(drops.map((d) => d.field)).toEqual(['tools[2].codeExecution', 'generationConfig.speechConfig', 'safetySettings', 'futureField']);
    expect(unservable.map((d) => d.field)).toEqual(['generationConfig.responseModalities', 'cachedContent']);
  });

  it('tool choice: one allowed name is that function, NONE none, AUTO auto; an unknown mode is a 400', () => {
    const tools = [{ functionDeclarations: [{ name: 'a' }, { name: 'b' }] }];
    const choice = (functionCallingConfig: unknown) => translate({ tools, toolConfig: { functionCallingConfig } }).chat.tool_choice;
    expect(choice({ mode: 'ANY', allowedFunctionNames: ['b'] })).toEqual({ type: 'function', function: { name: 'b' } });
    expect(choice({ mode: 'NONE' })).toBe('none');
    expect(choice({ mode: 'AUTO' })).toBe('auto');
    expect(choice({ mode: 'VALIDATED' })).toBe('auto');
    expect(() => choice({ mode: 'SOMETIMES' })).toThrow(/functionCallingConfig.mode/);
  });
});

describe('jsonSchemaOf', () => {
  it('lowercases types all the way down, turns nullable into a null type, leaves Gemini-only keys out', () => {
    expect(
      jsonSchemaOf({
        type: 'OBJECT',
        properties: { list: { type: 'ARRAY', items: { type: 'NUMBER', format: 'float' } }, either: { anyOf: [{ type: 'STRING' }], nullable: true } },
        required: ['list'],
        propertyOrdering: ['list', 'either'],
        example: {},
      }),
    ).toEqual({ type: 'object', properties: { list: { type: 'array', items: { type: 'number', format: 'float' } }, either: { anyOf: [{ type: 'string' }, { type: 'null' }] } }, required: ['list'] });
  });
});
