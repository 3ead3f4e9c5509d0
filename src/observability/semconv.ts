/**
 * The OpenTelemetry names the gateway emits, in one place. They follow the GenAI semantic
 * conventions (status: Development) as maintained in open-telemetry/semantic-conventions-genai
 * (docs/gen-ai/gen-ai-metrics.md and gen-ai-spans.md, built on semantic-conventions v1.42):
 * `gen_ai.provider.name` (which replaced `gen_ai.system` in v1.37), `gen_ai.client.token.usage`,
 * `gen_ai.client.operation.duration`, `gen_ai.server.time_to_first_token`, and the span
 * attributes of the inference span. Metric names are given in their Prometheus form (dots to
 * underscores, unit suffix), as the OpenTelemetry-to-Prometheus translation writes them.
 */

/** The operations this gateway serves (`gen_ai.operation.name` well-known values). */
export const OPERATION_CHAT = 'chat';
export const OPERATION_EMBEDDINGS = 'embeddings';

export const ATTR = {
  operationName: 'gen_ai.operation.name',
  providerName: 'gen_ai.provider.name',
  requestModel: 'gen_ai.request.model',
  requestMaxTokens: 'gen_ai.request.max_tokens',
  requestTemperature: 'gen_ai.request.temperature',
  requestTopP: 'gen_ai.request.top_p',
  requestFrequencyPenalty: 'gen_ai.request.frequency_penalty',
  requestPresencePenalty: 'gen_ai.request.presence_penalty',
  requestStopSequences: 'gen_ai.request.stop_sequences',
  requestSeed: 'gen_ai.request.seed',
  requestChoiceCount: 'gen_ai.request.choice.count',
  requestStream: 'gen_ai.request.stream',
  outputType: 'gen_ai.output.type',
  responseId: 'gen_ai.response.id',
  responseModel: 'gen_ai.response.model',
  responseFinishReasons: 'gen_ai.response.finish_reasons',
  responseTimeToFirstChunk: 'gen_ai.response.time_to_first_chunk',
  usageInputTokens: 'gen_ai.usage.input_tokens',
  usageOutputTokens: 'gen_ai.usage.output_tokens',
  usageCacheReadInputTokens: 'gen_ai.usage.cache_read.input_tokens',
  usageReasoningOutputTokens: 'gen_ai.usage.reasoning.output_tokens',
  /** Opt-in (tracing.captureContent): the chat history sent, and the model's answer. */
  inputMessages: 'gen_ai.input.messages',
  outputMessages: 'gen_ai.output.messages',
  errorType: 'error.type',
  httpMethod: 'http.request.method',
  httpStatus: 'http.response.status_code',
  urlPath: 'url.path',
  serviceName: 'service.name',
  serviceVersion: 'service.version',
  // The gateway's own, under its name.
  alias: 'switchyard.model_alias',
  target: 'switchyard.target',
  attempt: 'switchyard.attempt',
  attempts: 'switchyard.attempts',
  retryKind: 'switchyard.retry.kind',
  retryReason: 'switchyard.retry.reason',
  costUsd: 'switchyard.cost_usd',
  keyName: 'switchyard.key',
  team: 'switchyard.team',
  requestId: 'switchyard.request_id',
} as const;

/**
 * Latency from 10 ms to 10 min, about 1.5× apart: fine enough to tell models apart at their
 * p95 (a request, a first token) and long enough for slow reasoning answers. Finer than the
 * conventions' advice (ExplicitBucketBoundaries doubling from 10 ms to 82 s), which put every
 * model's p95 in the same bucket.
 */
const LATENCY = [0.01, 0.015, 0.02, 0.03, 0.04, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 1.5, 2, 3, 4, 5, 7.5, 10, 15, 20, 30, 45, 60, 90, 120, 180, 300, 600];

/** Bucket boundaries of each histogram, in seconds (tokens: a count). */
export const BUCKETS = {
  operationDuration: LATENCY,
  /** The conventions' recommended boundaries. */
  tokenUsage: [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864],
  timeToFirstToken: LATENCY,
  /**
   * Ours: the gateway's own time is expected well under a millisecond, so it starts at 0.1 ms;
   * it reaches 10 min like the others, since it includes retry backoff and writing to a slow client.
   */
  overhead: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10, 60, 600],
} as const;
