/**
 * What the Converse translations read of Bedrock's answers: the Converse response
 * (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html) and the
 * ConverseStream events (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseStreamOutput.html).
 * A tolerant reader's types: a field the translation can do without is optional, and a content
 * block or event it does not know (images, tool results, citations, events added later) is passed
 * over. Every stream payload also carries a random `p` padding field, never read.
 */

/** https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_TokenUsage.html */
export interface ConverseUsage {
  inputTokens?: number;
  outputTokens?: number;
  totalTokens?: number;
  cacheReadInputTokens?: number;
  cacheWriteInputTokens?: number;
  /** Older names of the cache counts, still sent beside the new ones. */
  cacheReadInputTokenCount?: number;
  cacheWriteInputTokenCount?: number;
}

/** An output content block (a union: one member is set). */
export interface ConverseOutputBlock {
  text?: string;
  toolUse?: { toolUseId?: string; name?: string; input?: unknown };
  reasoningContent?: { reasoningText?: { text?: string; signature?: string }; redactedContent?: string };
}

/** The non-streamed answer. Bedrock does not echo the model. */
export interface ConverseResponse {
  output?: { message?: { role?: string; content?: ConverseOutputBlock[] } };
  stopReason?: string;
  usage?: ConverseUsage;
}

/** `contentBlockStart`: only tool-use blocks announce themselves (text starts with its first delta). */
export interface ConverseBlockStart {
  contentBlockIndex: number;
  start?: { toolUse?: { toolUseId?: string; name?: string } };
}

/** `contentBlockDelta` (a union: one member is set). */
export interface ConverseBlockDelta {
  contentBlockIndex: number;
  delta?: {
    text?: string;
    /** A fragment of the tool input's JSON text. */
    toolUse?: { input?: string };
    reasoningContent?: { text?: string; signature?: string; redactedContent?: string };
    citation?: unknown;
  };
}

/** The events of a ConverseStream, by `:event-type`, with their payloads. */
export interface ConverseStreamPayloads {
  messageStart: { role?: 'assistant' };
  contentBlockStart: ConverseBlockStart;
  contentBlockDelta: ConverseBlockDelta;
  contentBlockStop: { contentBlockIndex: number };
  messageStop: { stopReason?: string; additionalModelResponseFields?: unknown };
  metadata: { usage?: ConverseUsage; metrics?: { latencyMs?: number }; trace?: unknown };
}

/** One ConverseStream event as `decodeAwsEventStream` gives it. */
export type ConverseStreamEvent = { [T in keyof ConverseStreamPayloads]: { kind: 'event'; type: T; payload: ConverseStreamPayloads[T] } }[keyof ConverseStreamPayloads];
