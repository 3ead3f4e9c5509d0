/**
 * The Gemini API's request side, as clients send it to `models/{model}:generateContent`
 * (https://ai.google.dev/api/generate-content#request-body) and the embedding and counting
 * methods. The answer side (GenerateContentResponse, parts, usage) is the gemini provider's, in
 * src/translate/gemini/native.ts: the same types, read in the other direction. Every object
 * tolerates extra fields: a new client release may send more.
 */
import type { GeminiContent, GeminiPart } from '../../translate/gemini/native.ts';

export type { GeminiCandidate, GeminiContent, GeminiPart, GeminiResponse, GeminiUsage } from '../../translate/gemini/native.ts';

/** A turn as a client sends it: `role` may be left out (a user turn). */
export interface ClientContent {
  role?: string;
  parts?: GeminiPart[];
  [extra: string]: unknown;
}

export interface FunctionDeclaration {
  name: string;
  description?: string;
  /** Gemini's OpenAPI subset (`type: "OBJECT"`, `nullable`). */
  parameters?: Record<string, unknown>;
  /** Plain JSON Schema (instead of `parameters`). */
  parametersJsonSchema?: Record<string, unknown>;
  [extra: string]: unknown;
}

export interface GeminiTool {
  functionDeclarations?: FunctionDeclaration[];
  /** Hosted tools (googleSearch, codeExecution, urlContext, ...): keys only Gemini serves. */
  [hosted: string]: unknown;
}

export interface GenerateContentRequest {
  contents: ClientContent[];
  systemInstruction?: ClientContent;
  tools?: GeminiTool[];
  toolConfig?: { functionCallingConfig?: { mode?: string; allowedFunctionNames?: string[] } };
  safetySettings?: unknown[];
  generationConfig?: Record<string, unknown>;
  cachedContent?: string;
  [extra: string]: unknown;
}

/** One `embedContent` request (also each item of `batchEmbedContents.requests`). */
export interface EmbedContentRequest {
  model?: string;
  content: GeminiContent | ClientContent;
  taskType?: string;
  title?: string;
  outputDimensionality?: number;
  [extra: string]: unknown;
}
