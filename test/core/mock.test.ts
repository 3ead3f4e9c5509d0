/**
 * The offline `demo` model behaves enough like a real one for the SDKs' structured-output and
 * tool-running helpers: tool arguments satisfy the tool's schema, `response_format` is honoured.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ajv } from 'ajv';
import type { RunnableToolFunctionWithParse } from 'openai/lib/RunnableFunction';
import { startTestGateway, type TestGateway } from 'switchyard-gateway/kit/testing';
import { configYaml } from '../helpers/repo.ts';

const ajv = new Ajv({ strict: false });

const WEATHER = {
  type: 'object',
  additionalProperties: false,
  required: ['city', 'unit', 'days', 'hourly'],
  properties: {
    city: { type: 'string', minLength: 2 },
    unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
    days: { type: 'integer', minimum: 1, maximum: 14 },
    hourly: { type: 'boolean' },
    when: { anyOf: [{ type: 'string', format: 'date' }, { type: 'null' }] },
    tags: { type: 'array', minItems: 2, items: { $ref: '#/$defs/tag' } },
  },
  $defs: { tag: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } } },
};

let t: TestGateway;
beforeAll(async () => {
  t = await startTestGateway(configYaml({ providers: '  mock: { plugin: mock }', models: '  demo: { targets: [{ provider: mock, model: mock-1 }] }' }));
});
afterAll(() => t.close());

describe('mock provider', () => {
  it('calls tools with arguments that satisfy their schema, plain and streamed', async () => {
    const validate = ajv.compile(WEATHER);
    const tools = [{ type: 'function' as const, function: { name: 'get_weather', parameters: WEATHER } }];
    const plain = await t.client().chat.completions.create({ model: 'demo', messages: [{ role: 'user', content: 'weather?' }], tools });
    const call = plain.choices[0].message.tool_calls![0];
    const args = JSON.parse(call.type === 'function' ? call.function.arguments : '');
    expect(validate(args), JSON.stringify(validate.errors)).toBe(true);
    const stream = await t.client().chat.completions.create({ model: 'demo', stream: true, messages: [{ role: 'user', content: 'weather?' }], tools });
    let streamed = '';
    for await (const chunk of stream) streamed += chunk.choices[0]?.delta.tool_calls?.[0]?.function?.arguments ?? '';
    expect(JSON.parse(streamed)).toEqual(args);
  });

  it('runs a tool loop with the SDK runner to a final answer', async () => {
    const calls: unknown[] = [];
    const tool: RunnableToolFunctionWithParse<object> = {
      type: 'function',
      function: {
        name: 'get_weather',
        description: 'Weather for a city',
        parameters: WEATHER,
        parse: (text) => JSON.parse(text),
        function: (a) => {
          calls.push(a);
          return { temperature: 21 };
        },
      },
    };
    const runner = t.client().chat.completions.runTools({ model: 'demo', messages: [{ role: 'user', content: 'weather in Paris?' }], tools: [tool] });
    const final = await runner.finalContent();
    expect(calls).toHaveLength(1);
    expect(ajv.validate(WEATHER, calls[0])).toBe(true);
    expect(final).toContain('Hello from Switchyard');
  });

  it('honours response_format json_object and json_schema', async () => {
    const object = await t.client().chat.completions.create({ model: 'demo', messages: [{ role: 'user', content: 'json please' }], response_format: { type: 'json_object' } });
    expect(JSON.parse(object.choices[0].message.content!)).toEqual({ message: expect.stringContaining('Hello from Switchyard') });
    const parsed = await t.client().chat.completions.parse({
      model: 'demo',
      messages: [{ role: 'user', content: 'weather as json' }],
      response_format: { type: 'json_schema', json_schema: { name: 'weather', strict: true, schema: WEATHER } },
    });
    expect(ajv.validate(WEATHER, parsed.choices[0].message.parsed)).toBe(true);
  });
});
