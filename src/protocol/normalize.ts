/**
 * Provider-agnostic fix-ups that make every answer a valid OpenAI object whatever served it:
 * the `model` names the upstream model that answered (never the alias), required-but-nullable
 * fields exist, usage totals add up. Extra upstream fields are left alone.
 */
import type { ChatCompletion, ChatCompletionChunk, Usage } from '../openai-types.ts';
import type { ProviderCall } from '../plugin-api.ts';

export function normalizeCompletion(body: ChatCompletion, call: ProviderCall): ChatCompletion {
  body.object = 'chat.completion';
  if (!body.model) body.model = call.model;
  if (!body.id) body.id = `chatcmpl-${call.requestId}`;
  if (typeof body.created !== 'number') body.created = Math.floor(Date.now() / 1000);
  // Some servers (Azure) send `system_fingerprint: null`; the schema allows it absent, not null.
  if (body.system_fingerprint === null) delete body.system_fingerprint;
  for (const choice of body.choices) {
    // Reasoning models omit logprobs; the OpenAI schema requires the key (nullable).
    if (choice.logprobs === undefined) choice.logprobs = null;
    if (choice.finish_reason === undefined) choice.finish_reason = null;
    const message = choice.message;
    if (message) {
      if (message.content === undefined) message.content = null;
      if (message.refusal === undefined) message.refusal = null;
    }
  }
  if (body.usage) body.usage = normalizeUsage(body.usage);
  return body;
}

export function normalizeChunk(chunk: ChatCompletionChunk, call: ProviderCall): ChatCompletionChunk {
  if (chunk.object !== 'chat.completion.chunk') chunk.object = 'chat.completion.chunk';
  if (!chunk.model) chunk.model = call.model;
  if (typeof chunk.id !== 'string') chunk.id = `chatcmpl-${call.requestId}`;
  if (typeof chunk.created !== 'number') chunk.created = Math.floor(Date.now() / 1000);
  if (!Array.isArray(chunk.choices)) chunk.choices = [];
  if (chunk.system_fingerprint === null) delete chunk.system_fingerprint;
  if (chunk.usage) chunk.usage = normalizeUsage(chunk.usage);
  return chunk;
}

/**
 * Whether normalizeChunk would leave `chunk` as it is, so that the upstream text it was parsed
 * from still says it exactly. Keep in step with normalizeChunk (normalize.test.ts holds them together).
 */
export function chunkIsNormal(chunk: ChatCompletionChunk): boolean {
  const usage = chunk.usage;
  return (
    chunk.object === 'chat.completion.chunk' &&
    !!chunk.model &&
    typeof chunk.id === 'string' &&
    typeof chunk.created === 'number' &&
    Array.isArray(chunk.choices) &&
    chunk.system_fingerprint !== null &&
    (!usage || (typeof usage.total_tokens === 'number' && usage.prompt_tokens !== undefined && usage.completion_tokens !== undefined))
  );
}

export function normalizeUsage(usage: Usage): Usage {
  const prompt = usage.prompt_tokens ?? 0;
  const completion = usage.completion_tokens ?? 0;
  if (typeof usage.total_tokens !== 'number') usage.total_tokens = prompt + completion;
  if (usage.prompt_tokens === undefined) usage.prompt_tokens = prompt;
  if (usage.completion_tokens === undefined) usage.completion_tokens = completion;
  return usage;
}
