/**
 * `transform-response`: the provider's native answer → an OpenAI chat completion or a stream of
 * chat.completion.chunk objects, per attempt (so a fallback to another provider is translated by
 * that provider). The attempt does the work; this stage is where it happens in the pipeline, so
 * stages inside it see native answers and stages outside it see OpenAI ones.
 */
import { defineStage } from '../plugin-api.ts';
import { exchangeOf } from '../pipeline/exchange.ts';

export default defineStage({
  apiVersion: 2,
  kind: 'stage',
  name: 'transform-response',
  description: 'Native provider answer → OpenAI chat completion or chunks',
  create() {
    return {
      name: 'transform-response',
      async handle(ctx, next) {
        await next();
        exchangeOf(ctx).attempt?.translate();
      },
    };
  },
});
