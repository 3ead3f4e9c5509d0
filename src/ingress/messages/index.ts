/**
 * The Anthropic Messages API (`POST /v1/messages`, `/v1/messages/count_tokens`) as translations
 * over the gateway's chat model: request → chat request, chat completion or chunk stream →
 * `message` or Anthropic's named events, gateway errors → Anthropic's envelope. Pure, apart from
 * the stream writer's per-request state.
 */
export { translateMessagesRequest, messagesToChat, effortOfBudget, type MessagesTranslation } from './request.ts';
export { chatToMessage } from './response.ts';
export { MessagesStreamWriter, toSse } from './stream.ts';
export { anthropicErrorOf, ANTHROPIC_ERRORS } from './errors.ts';
export { countTokens, estimateInputTokens } from './count-tokens.ts';
export type * from './types.ts';
