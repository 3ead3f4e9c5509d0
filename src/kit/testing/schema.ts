/**
 * Checks what the gateway answers against OpenAI's own JSON Schemas (schemas/openai, generated
 * from OpenAI's OpenAPI document), so "OpenAI-compatible" means what OpenAI says it means.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { expect } from 'vitest';
import bundle from '../../../schemas/openai/chat-completions.schema.json' with { type: 'json' };
import responsesBundle from '../../../schemas/openai/responses.schema.json' with { type: 'json' };

/** The roots a gateway answer is checked against. */
export type OpenAiSchema = 'CreateChatCompletionRequest' | 'CreateChatCompletionResponse' | 'CreateChatCompletionStreamResponse' | 'ErrorResponse' | 'ListModelsResponse' | 'Model' | ResponsesSchema;

/** The Responses API roots, from their own bundle: a request, a `response` object, one stream event. */
type ResponsesSchema = 'CreateResponse' | 'Response' | 'ResponseStreamEvent';
const RESPONSES_ROOTS: ReadonlySet<string> = new Set<ResponsesSchema>(['CreateResponse', 'Response', 'ResponseStreamEvent']);

// ajv-formats is CommonJS; its default export is the plugin function.
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => void;
const ajv = new Ajv2020({ discriminator: true, allErrors: true });
addFormats(ajv);
// OpenAI's own format: integer Unix seconds.
ajv.addFormat('unixtime', { type: 'number', validate: Number.isInteger });
ajv.addSchema(bundle);
ajv.addSchema(responsesBundle);

/**
 * Fails the test unless `value` validates against the OpenAI schema `root`.
 *
 * @example
 * expectValid('CreateChatCompletionResponse', await client.chat.completions.create({ ... }));
 */
export function expectValid(root: OpenAiSchema, value: unknown): void {
  const validate = ajv.getSchema(`${RESPONSES_ROOTS.has(root) ? responsesBundle.$id : bundle.$id}#/$defs/${root}`);
  if (!validate) throw new Error(`no schema ${root}`);
  const ok = validate(value);
  expect(ok ? [] : validate.errors, `${root} must validate: ${JSON.stringify(value).slice(0, 400)}`).toEqual([]);
}
