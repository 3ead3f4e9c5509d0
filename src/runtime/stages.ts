/** A generation's stage instances, created in `pipeline:` order; a create() that throws is a config error. */
import type { ConfigIssues } from '../config/source.ts';
import type { StageRef } from '../config/types.ts';
import type { RequestContext, RequestOutcome, StageEnv, StageInstance, StagePlugin } from '../plugin-api.ts';

export async function createStages(pipeline: readonly StageRef[], plugins: readonly StagePlugin[], env: StageEnv, source: ConfigIssues): Promise<StageInstance[]> {
  const stages: StageInstance[] = [];
  for (const [i, ref] of pipeline.entries()) {
    const plugin = plugins[i];
    const options = typeof ref === 'string' ? {} : (ref.options ?? {});
    try {
      const stage = await plugin.create(options, env);
      const named = { ...stage, name: stage.name || plugin.name };
      // Declared as a number at run time: a JavaScript plugin may still say 1.
      if ((plugin.apiVersion as number) === 1) {
        source.issue('warning', ['pipeline', i], `stage "${plugin.name}" targets plugin API version 1: it runs, with version 1's context in onResponse; update it to version 2 (CHANGELOG.md)`);
        stages.push(versionOne(named));
      } else stages.push(named);
    } catch (err) {
      source.error(['pipeline', i], `stage "${plugin.name}" failed to start: ${String((err as Error)?.message ?? err)}`);
    }
  }
  return stages;
}

/** A version 1 stage's onResponse read the outcome off the context: it gets a context that has it. */
function versionOne(stage: StageInstance): StageInstance {
  const hook = stage.onResponse;
  if (!hook) return stage;
  return { ...stage, onResponse: (ctx, outcome) => hook.call(stage, versionOneContext(ctx, outcome), outcome) };
}

function versionOneContext(ctx: RequestContext, outcome: RequestOutcome): RequestContext {
  const { id, operation, ingress, startedAt, headers, body, signal, log, key, route, attempt, attempts, responseHeaders } = ctx;
  const { status, usage, costUsd, upstreamModel, refusal, traceId, timing } = outcome;
  const error = outcome.errorInStream ? undefined : outcome.error;
  const streamError = outcome.errorInStream ? outcome.error : undefined;
  return {
    id,
    operation,
    ingress,
    startedAt,
    headers,
    body,
    signal,
    log,
    key,
    route,
    attempt,
    attempts,
    responseHeaders,
    transformAnswer: (transform) => ctx.transformAnswer(transform),
    annotate: (field, value) => ctx.annotate(field, value),
    ...{ status, usage, costUsd, upstreamModel, refusal, traceId, error, streamError, timing },
  };
}
