/** Shared handling of request parameters a provider cannot honour. */
import { GatewayError } from '../errors.ts';
import type { ProviderCall } from '../plugin-api.ts';
import type { FunctionTool, ResponseFormat } from '../openai-types.ts';

/**
 * Call for each parameter present in the request that the provider cannot honour. Answers 400
 * naming it, unless `dropUnsupportedParams` is set for the alias or provider: then the caller
 * drops it, reported like every drop (`x-switchyard-dropped`, the log line; a 400 when strict). Returns true when the parameter should be dropped.
 */
export function unsupportedParam(call: ProviderCall, param: string, why = 'is not supported'): true {
  if (!call.dropUnsupportedParams) {
    throw new GatewayError(
      'unsupported_parameter',
      `${call.provider}: the parameter '${param}' ${why} by model ${call.model}. Remove it, or set dropUnsupportedParams: true for this model in gateway.yaml.`,
      { param },
    );
  }
  // Reported like every drop (a strict request is refused here); the log line names it too.
  call.drop?.({ field: param, reason: `the parameter ${why} by ${call.provider} model ${call.model} (dropUnsupportedParams)` });
  call.log.info({ reqId: call.requestId, provider: call.provider, param }, `dropped unsupported parameter '${param}'`);
  return true;
}

/** Checks every listed parameter that is present (not undefined/null) in the request. */
export function checkUnsupported(call: ProviderCall, params: readonly string[], why?: string): void {
  for (const p of params) {
    const v = call.request[p];
    if (v !== undefined && v !== null) unsupportedParam(call, p, why);
  }
}

/**
 * For providers without sampling extras: `n` above 1, `logprobs`/`top_logprobs`, non-zero
 * penalties, a non-empty `logit_bias` and non-text `modalities` are unsupported; their no-op
 * values (`n: 1`, `logprobs: false`, `0`, `{}`, `["text"]`) pass.
 */
export function checkSamplingExtras(call: ProviderCall, refuse: (param: string, why?: string) => void = (param, why) => unsupportedParam(call, param, why)): void {
  const r = call.request;
  if (typeof r.n === 'number' && r.n > 1) refuse('n', 'above 1 is not supported');
  if (r.logprobs === true) refuse('logprobs');
  if (typeof r.top_logprobs === 'number' && r.top_logprobs > 0) refuse('top_logprobs');
  for (const p of ['presence_penalty', 'frequency_penalty'] as const) {
    if (typeof r[p] === 'number' && r[p] !== 0) refuse(p);
  }
  const bias = r.logit_bias;
  if (bias && typeof bias === 'object' && Object.keys(bias).length) refuse('logit_bias');
  const modalities = r.modalities;
  if (Array.isArray(modalities) && modalities.some((m) => m !== 'text')) refuse('modalities', 'other than ["text"] are not supported');
}

/** The function of `tools[index]`; any other kind of tool is unsupported (400, or dropped: undefined). */
export function functionOf(tool: FunctionTool, index: number, call: ProviderCall): FunctionTool['function'] | undefined {
  if (tool.type === 'function' && tool.function) return tool.function;
  unsupportedParam(call, `tools[${index}]`, `of type "${tool.type}" is not supported`);
  return undefined;
}

/** The `json_schema` block of a request's `response_format`, with its schema checked to be an object. */
export type JsonSchemaFormat = Extract<ResponseFormat, { type: 'json_schema' }>['json_schema'] & { schema: Record<string, unknown> };

/**
 * For providers whose structured output takes a schema and has no schema-less JSON mode
 * (Anthropic `output_config.format`, Bedrock `outputConfig.textFormat`): the request's
 * `json_schema` block; undefined for no format or `text`; 400 when the schema is missing; any
 * other type (`json_object`) is unsupported (400, or dropped: undefined).
 */
export function jsonSchemaFormat(call: ProviderCall): JsonSchemaFormat | undefined {
  const f = call.request.response_format;
  if (!f || f.type === 'text') return undefined;
  if (f.type === 'json_schema') {
    const schema = f.json_schema?.schema;
    if (!schema || typeof schema !== 'object') {
      throw new GatewayError('invalid_request', "Invalid 'response_format.json_schema.schema': a JSON schema object is required.", { param: 'response_format.json_schema.schema' });
    }
    return { ...f.json_schema, schema };
  }
  unsupportedParam(call, 'response_format', `of type "${f.type}" is not supported (use "json_schema" with a schema)`);
  return undefined;
}
