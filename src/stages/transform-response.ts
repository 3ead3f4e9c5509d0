/**
 * `transform-response`: the provider's native answer → an OpenAI chat completion or a stream of
 * chat.completion.chunk objects, per attempt (so a fallback to another provider is translated by
 * that provider). Translation failures are the provider's fault: a 502, never the client's.
 */
import { defineStage, type ProviderCall, type ProviderInstance, type RequestContext } from '../plugin-api.ts';
import type { ChatCompletionChunk } from '../openai-types.ts';
import { UpstreamError } from '../providers/upstream-error.ts';
import { normalizeChunk, normalizeCompletion } from '../protocol/normalize.ts';

export default defineStage({
  apiVersion: 1,
  kind: 'stage',
  name: 'transform-response',
  description: 'Native provider answer → OpenAI chat completion or chunks',
  create() {
    return {
      name: 'transform-response',
      async handle(ctx, next) {
        await next();
        const native = ctx.upstream;
        const call = ctx.call;
        const instance = ctx.target?.instance;
        if (!native || !call || !instance) return;
        if (native.kind === 'json') {
          let body;
          try {
            body = instance.toCompletion(native.body, call);
          } catch (err) {
            throw asProviderFault(call, err);
          }
          normalizeCompletion(body, call);
          ctx.response = { kind: 'completion', body };
          ctx.usage = body.usage;
          ctx.upstreamModel = body.model;
        } else {
          ctx.response = { kind: 'stream', chunks: translateStream(ctx, native.events, instance, call) };
        }
      },
    };
  },
});

async function* translateStream(ctx: RequestContext, events: AsyncIterable<unknown>, instance: ProviderInstance, call: ProviderCall): AsyncGenerator<ChatCompletionChunk> {
  const translator = instance.createStreamTranslator(call);
  for await (const event of events) {
    let out;
    try {
      out = translator.push(event);
    } catch (err) {
      throw asProviderFault(call, err);
    }
    if (out === undefined) continue;
    if (Array.isArray(out)) {
      for (const chunk of out) yield observe(ctx, normalizeChunk(chunk, call));
    } else yield observe(ctx, normalizeChunk(out, call));
  }
  let tail;
  try {
    tail = translator.end?.();
  } catch (err) {
    throw asProviderFault(call, err);
  }
  if (tail === undefined) return;
  for (const chunk of Array.isArray(tail) ? tail : [tail]) yield observe(ctx, normalizeChunk(chunk, call));
}

function observe(ctx: RequestContext, chunk: ChatCompletionChunk): ChatCompletionChunk {
  if (chunk.usage) ctx.usage = chunk.usage;
  if (!ctx.upstreamModel && chunk.model) ctx.upstreamModel = chunk.model;
  return chunk;
}

function asProviderFault(call: ProviderCall, err: unknown): unknown {
  if (err instanceof UpstreamError) return err;
  return new UpstreamError(call.provider, 'protocol', 200, { message: String((err as Error)?.message ?? err) }, undefined, err);
}
