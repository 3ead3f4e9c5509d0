/** Validators for what the gateway returns, from the official OpenAI schema bundle in shared/spec. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { expect } from 'vitest';
import { SHARED } from './paths.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => void;
const bundle = JSON.parse(readFileSync(path.join(SHARED, 'spec', 'chat-completions.schema.json'), 'utf8')) as { $id: string };
const ajv = new Ajv2020({ discriminator: true, allErrors: true });
addFormats(ajv);
ajv.addFormat('unixtime', { type: 'number', validate: Number.isInteger });
ajv.addSchema(bundle);

type Root = 'CreateChatCompletionResponse' | 'CreateChatCompletionStreamResponse' | 'ErrorResponse' | 'ListModelsResponse' | 'Model';

export function expectValid(root: Root, value: unknown): void {
  const validate = ajv.getSchema(`${bundle.$id}#/$defs/${root}`);
  if (!validate) throw new Error(`no schema ${root}`);
  const ok = validate(value);
  expect(ok ? [] : validate.errors, `${root} must validate: ${JSON.stringify(value).slice(0, 400)}`).toEqual([]);
}
