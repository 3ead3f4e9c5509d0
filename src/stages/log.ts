/**
 * `log`: one line per request, written after the response is complete (so streamed token counts
 * are known): request id, key name, model asked for, provider and model that answered, status,
 * tokens, duration and every attempt. Keys and Authorization never reach it.
 */
import { defineStage, type RequestContext } from '../plugin-api.ts';
import { attemptCount } from '../pipeline/attempts.ts';
import { overheadMs, roundMs } from '../observability/timing.ts';

/**
 * @param redact scrubs configured secrets from what the client chose: a model name that is not
 * a configured alias could be anything, a key included.
 */
export function requestLogLine(ctx: RequestContext, redact: (text: string) => string = (t) => t): Record<string, unknown> {
  const usage = ctx.usage;
  const line: Record<string, unknown> = {
    reqId: ctx.id,
    key: ctx.key?.name,
    model: typeof ctx.body?.model === 'string' ? (ctx.route ? ctx.body.model : redact(ctx.body.model)) : undefined,
    provider: ctx.attempt?.target.provider,
    upstreamModel: ctx.upstreamModel,
    status: ctx.status,
    stream: ctx.body?.stream === true,
    promptTokens: usage?.prompt_tokens,
    completionTokens: usage?.completion_tokens,
    totalTokens: usage?.total_tokens,
    durationMs: Math.round((performance.now() - ctx.startedAt) * 100) / 100,
    attempts: attemptCount(ctx),
    upstreamMs: roundMs(ctx.timing.upstreamMs),
    overheadMs: roundMs(overheadMs(ctx)),
  };
  if (ctx.timing.firstChunkMs !== undefined) line.ttftMs = roundMs(ctx.timing.firstChunkMs);
  if (ctx.traceId) line.traceId = ctx.traceId;
  if (ctx.ingress !== 'chat') line.ingress = ctx.ingress;
  // null (unknown price) is logged as such, never as 0.
  if (ctx.costUsd !== undefined) line.costUsd = ctx.costUsd;
  if (ctx.key?.team) line.team = ctx.key.team;
  if (ctx.attempts.length > 1 || ctx.attempts.some((a) => a.outcome !== 'ok')) line.attemptLog = ctx.attempts;
  const error = ctx.streamError ?? ctx.error;
  if (error) {
    line.error = error.code;
    line.errorMessage = error.message;
    if (ctx.streamError) line.streamError = true;
  }
  return line;
}

export default defineStage({
  apiVersion: 1,
  kind: 'stage',
  name: 'log',
  description: 'One structured log line per request',
  create(_options, { log, runtime }) {
    return {
      name: 'log',
      onResponse(ctx) {
        const line = requestLogLine(ctx, runtime.redact);
        const status = ctx.status ?? 0;
        if (status >= 500 || ctx.streamError) log.warn(line, 'request failed');
        else log.info(line, 'request');
      },
    };
  },
});
