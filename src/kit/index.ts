/**
 * The provider author's kit: the helpers the built-in providers use, public so that a plugin
 * written outside this repository can do everything a built-in does.
 *
 * @example
 * import { defineHttpProvider } from 'switchyard-gateway';
 * import { ChunkBuilder, openAiStyleFailure, UpstreamError } from 'switchyard-gateway/kit';
 */
export { decodeSseJson, type SseJsonEvent } from '../providers/http-provider.ts';
export { UpstreamError, parseRetryAfter, categorize, HTTP_FAILURES, TRANSPORT_FAILURES, type FailureRule, type UpstreamErrorKind } from '../providers/upstream-error.ts';
export { unsupportedParam, checkUnsupported, checkSamplingExtras, functionOf, jsonSchemaFormat, type JsonSchemaFormat } from '../providers/params.ts';
export { openAiStyleFailure } from '../protocol/openai-errors.ts';
export { readSse, sseData, type SseMessage } from '../protocol/sse.ts';
export { ChunkBuilder, type ChunkDelta } from '../protocol/chunks.ts';
export { textOf, partsOf, parseDataUrl, parseArguments, toolCallArguments } from '../protocol/content.ts';
export { GatewayError, ERROR_CATALOGUE, type ErrorCode } from '../errors.ts';
export { applyCapabilities } from '../providers/capabilities.ts';
export { reportDrop } from '../providers/drops.ts';
// Cloud credentials that expire, kept fresh for a provider's `signRequest` and reported by its `identity`.
export { refreshingCredential, describeFailure, type IssuedCredential, type RefreshingCredential, type RefreshingCredentialOptions } from '../providers/credentials.ts';
export { mulberry32 } from '../protocol/random.ts';

// The built-in translations, for a provider that speaks one of these protocols behind other
// URLs or auth (Vertex AI's Gemini and Claude, a Bedrock proxy). Each is pure: OpenAI chat
// request → native body, native answer → chat.completion, native stream → chunks (a fresh
// translator per attempt), native error body → UpstreamFailure; `*_CAPABILITIES` says what the
// translation carries, for the provider's `capabilities`.

// OpenAI-compatible chat upstreams: the gateway's own chat fields (thinking_blocks, cache_control) taken off.
export { withoutChatExtensions } from '../translate/chat/extensions.ts';
// Thinking signatures by family, and reporting what a translation leaves out of the extensions.
export {
  claudeThinkingBlocks,
  geminiSignatureOf,
  isClaudeThinking,
  reportCacheMarkersLeftOut,
  reportThinkingLeftOut,
  tagGeminiSignature,
  type GeminiSignatureSite,
} from '../translate/chat/thinking.ts';
// The web search extension: report it (or one of its settings) left out, make a citation.
export { reportWebSearchLeftOut, reportWebSearchSetting, urlCitation, utf16IndexOfByte } from '../translate/chat/web-search.ts';

// Gemini generateContent / streamGenerateContent (https://ai.google.dev/api/generate-content).
export { buildGeminiRequest, GEMINI_CAPABILITIES, type GeminiRequestSettings } from '../translate/gemini/request.ts';
export { geminiToCompletion } from '../translate/gemini/response.ts';
export { createGeminiStreamTranslator } from '../translate/gemini/stream.ts';
export { readGoogleError } from '../translate/gemini/errors.ts';
export { buildGeminiCountTokensBody, GEMINI_COUNT_TOKENS, geminiCountTokensPassthrough, geminiTokenCount, vertexCountTokensFields } from '../translate/gemini/count-tokens.ts';
export type { GeminiCandidate, GeminiContent, GeminiPart, GeminiResponse, GeminiUsage, GoogleStatus } from '../translate/gemini/native.ts';

// Anthropic Messages (https://docs.anthropic.com/en/api/messages), SSE with named events.
export { buildAnthropicRequest, ANTHROPIC_CAPABILITIES, type AnthropicRequestSettings } from '../translate/anthropic/request.ts';
export { anthropicToCompletion } from '../translate/anthropic/response.ts';
export { createAnthropicStreamTranslator } from '../translate/anthropic/stream.ts';
export { readAnthropicError } from '../translate/anthropic/errors.ts';
export type { AnthropicContentBlock, AnthropicDelta, AnthropicErrorBody, AnthropicResponse, AnthropicStreamEvent, AnthropicUsage } from '../translate/anthropic/native.ts';

// OpenAI Responses (https://platform.openai.com/docs/api-reference/responses), read back to chat for
// a provider that passes `/v1/responses` through natively (usage, cost, the model); errors are
// OpenAI's envelope (`openAiStyleFailure` above).
export { responsesToCompletion, usageOf as responsesUsageOf } from '../translate/openai-responses/response.ts';
export { createResponsesStreamTranslator } from '../translate/openai-responses/stream.ts';
export type { ResponsesBody, ResponsesOutputItem, ResponsesStreamEvent, ResponsesUsage } from '../translate/openai-responses/native.ts';

// Bedrock Converse / ConverseStream (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html).
export { buildConverseRequest, buildConverseBody, conversePath, CONVERSE_CAPABILITIES, type ConverseRequestSettings } from '../translate/bedrock/request.ts';
export { converseToCompletion } from '../translate/bedrock/response.ts';
export { createConverseStreamTranslator } from '../translate/bedrock/stream.ts';
export { readBedrockError } from '../translate/bedrock/errors.ts';
export { buildConverseCountTokensRequest, converseTokenCount } from '../translate/bedrock/count-tokens.ts';
export type { ConverseBlockDelta, ConverseBlockStart, ConverseOutputBlock, ConverseResponse, ConverseStreamEvent, ConverseStreamPayloads, ConverseUsage } from '../translate/bedrock/native.ts';
// The binary AWS event stream (application/vnd.amazon.eventstream) → events; SSE is `decodeSseJson` / `readSse` above.
export { decodeAwsEventStream, type AwsStreamEvent } from '../translate/bedrock/eventstream.ts';
