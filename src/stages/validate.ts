/**
 * `validate`: the body against the Chat Completions request shape (schemas/chat-request.schema.json,
 * compiled once). Only what the gateway and providers rely on is checked; unknown parameters
 * pass through untouched. A failure is a 400 whose `param` names the field, as OpenAI does.
 */
import { Ajv } from 'ajv';
import type { ErrorObject } from 'ajv';
import requestSchema from '../../schemas/chat-request.schema.json' with { type: 'json' };
import embeddingsSchema from '../../schemas/embeddings-request.schema.json' with { type: 'json' };
import { defineStage } from '../plugin-api.ts';
import { GatewayError } from '../errors.ts';
import { describeSchemaErrors } from '../config/schema-errors.ts';
import { formatPath } from '../config/issues.ts';

const ajv = new Ajv({ allErrors: false, verbose: true, discriminator: true, strict: false });
const validateRequest = ajv.compile(requestSchema);
const validateEmbeddings = ajv.compile(embeddingsSchema);

export function requestError(errors: readonly ErrorObject[], body: unknown): GatewayError {
  // A missing top-level field is answered as OpenAI does, with its own code.
  const missing = errors.find((e) => e.keyword === 'required' && e.instancePath === '');
  if (missing) {
    const name = String((missing.params as { missingProperty: string }).missingProperty);
    return new GatewayError('missing_required_parameter', `Missing required parameter: '${name}'.`, { param: name });
  }
  const [finding] = describeSchemaErrors(errors, body);
  const param = finding?.path.length ? formatPath(finding.path) : null;
  const message = finding ? (param ? `Invalid '${param}': ${finding.message}.` : `Invalid request: ${finding.message}.`) : 'Invalid request body.';
  return new GatewayError('invalid_request', message, { param });
}

export default defineStage({
  apiVersion: 2,
  kind: 'stage',
  name: 'validate',
  description: 'Checks the request body against the Chat Completions schema',
  create() {
    return {
      name: 'validate',
      // Not async: the refusal is a rejected promise, the rest is next()'s own (no wrapper promise per request).
      handle(ctx, next) {
        const body: unknown = ctx.body;
        if (!body || typeof body !== 'object' || Array.isArray(body)) {
          return Promise.reject(new GatewayError('invalid_request', 'The request body must be a JSON object.'));
        }
        const validate = ctx.operation === 'embeddings' ? validateEmbeddings : validateRequest;
        if (!validate(body)) return Promise.reject(requestError(validate.errors ?? [], body));
        return next();
      },
    };
  },
});
