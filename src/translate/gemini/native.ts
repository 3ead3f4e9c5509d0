/**
 * The slice of the Gemini `generateContent` wire format this plugin reads and writes
 * (https://ai.google.dev/api/generate-content). Every object tolerates extra fields: Google adds
 * some in every release (`turnToken`, `avgLogprobs`, Vertex's `createTime`, ...).
 */

import type { GroundingMetadata } from './grounding.ts';

/** One part of a turn. Only one data field is set per part. */
export interface GeminiPart {
  text?: string;
  /** A thought summary (only with `thinkingConfig.includeThoughts`). */
  thought?: boolean;
  /** Opaque; Gemini 3 wants it back on the function-call parts of later requests. */
  thoughtSignature?: string;
  inlineData?: { mimeType: string; data: string };
  fileData?: { mimeType?: string; fileUri: string };
  functionCall?: { name: string; args?: Record<string, unknown>; id?: string };
  functionResponse?: { name: string; response: Record<string, unknown>; id?: string };
  [extra: string]: unknown;
}

export interface GeminiContent {
  role: 'user' | 'model';
  parts: GeminiPart[];
}

export interface LogprobsCandidate {
  token?: string;
  tokenId?: number;
  logProbability?: number;
}

export interface LogprobsResult {
  topCandidates?: Array<{ candidates?: LogprobsCandidate[] }>;
  chosenCandidates?: LogprobsCandidate[];
}

export interface GeminiCandidate {
  content?: { parts?: GeminiPart[]; role?: string };
  finishReason?: string;
  finishMessage?: string;
  /** Missing on Vertex and when there is one candidate. */
  index?: number;
  logprobsResult?: LogprobsResult;
  /** What Google Search grounding found and which text it supports (grounding.ts). */
  groundingMetadata?: GroundingMetadata;
  [extra: string]: unknown;
}

/** Token counts. Proto3 JSON leaves out zeros, so every field may be missing. */
export interface GeminiUsage {
  promptTokenCount?: number;
  candidatesTokenCount?: number;
  thoughtsTokenCount?: number;
  cachedContentTokenCount?: number;
  toolUsePromptTokenCount?: number;
  totalTokenCount?: number;
  [extra: string]: unknown;
}

export interface GeminiResponse {
  candidates?: GeminiCandidate[];
  promptFeedback?: { blockReason?: string; [extra: string]: unknown };
  usageMetadata?: GeminiUsage;
  modelVersion?: string;
  responseId?: string;
  /** Vertex AI only (RFC 3339). */
  createTime?: string;
  [extra: string]: unknown;
}

/** A google.rpc.Status, as the body of a failed call (`{"error": {...}}`). */
export interface GoogleStatus {
  code?: number;
  message?: string;
  status?: string;
  details?: Array<Record<string, unknown> & { '@type'?: string }>;
}
