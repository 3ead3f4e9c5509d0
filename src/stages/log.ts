/**
 * `log`: one line per request, written after the response is complete (so streamed token counts
 * are known): request id, key name, model asked for, provider and model that answered, status,
 * tokens, duration and every attempt. Keys and Authorization never reach it.
 */
import { defineStage, type RequestContext, type RequestOutcome } from '../plugin-api.ts';

const round = (ms: number): number => Math.round(ms * 100) / 100;

/**
 * @param redact scrubs configured secrets from what the client chose: a model name that is not
 * a configured alias could be anything, a key included.
 */
export function requestLogLine(ctx: RequestContext, outcome: RequestOutcome, redact: (text: string) => string = (t) => t): Record<string, unknown> {
  const { usage, timing, attempts } = outcome;
  const tried = triedOf(attempts);
  const line: Record<string, unknown> = {
    reqId: ctx.id,
    key: ctx.key?.name,
    model: typeof ctx.body?.model === 'string' ? (ctx.route ? ctx.body.model : redact(ctx.body.model)) : undefined,
    provider: outcome.provider,
    upstreamModel: outcome.upstreamModel,
    status: outcome.status,
    stream: ctx.body?.stream === true,
    promptTokens: usage?.prompt_tokens,
    completionTokens: usage?.completion_tokens,
    totalTokens: usage?.total_tokens,
    durationMs: round(timing.durationMs),
    attempts: tried,
    upstreamMs: round(timing.upstreamMs),
    overheadMs: round(timing.overheadMs),
  };
  if (timing.firstChunkMs !== undefined) line.ttftMs = round(timing.firstChunkMs);
  if (outcome.traceId) line.traceId = outcome.traceId;
  if (ctx.ingress !== 'chat') line.ingress = ctx.ingress;
  if (ctx.operation === 'count_tokens') line.operation = ctx.operation;
  // null (unknown price) is logged as such, never as 0.
  if (outcome.costUsd !== undefined) line.costUsd = outcome.costUsd;
  if (ctx.key?.team) line.team = ctx.key.team;
  if (outcome.dropped) line.dropped = outcome.dropped.map((d) => d.field);
  // Stages' own fields never overwrite the core's.
  const annotations = outcome.annotations;
  if (annotations) for (const field in annotations) if (Object.hasOwn(annotations, field) && !(field in line)) line[field] = annotations[field];
  if (attempts.length > 1 || (attempts.length === 1 && attempts[0].outcome !== 'ok')) line.attemptLog = attempts;
  const error = outcome.error;
  if (error) {
    line.error = error.code;
    line.errorMessage = error.message;
    if (outcome.errorInStream) line.streamError = true;
  }
  return line;
}

/** Attempts sent upstream (skipped targets were not tried), counted without a filtered copy. */
function triedOf(attempts: RequestOutcome['attempts']): number {
  let n = 0;
  for (let i = 0; i < attempts.length; i++) if (attempts[i].outcome !== 'skipped') n++;
  return n;
}

export default defineStage({
  apiVersion: 2,
  kind: 'stage',
  name: 'log',
  description: 'One structured log line per request',
  create(_options, { log, runtime }) {
    return {
      name: 'log',
      onResponse(ctx, outcome) {
        const line = requestLogLine(ctx, outcome, runtime.redact);
        if (outcome.status >= 500 || outcome.errorInStream) log.warn(line, 'request failed');
        else log.info(line, 'request');
      },
    };
  },
});
