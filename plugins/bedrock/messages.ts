/**
 * Claude on Bedrock in Anthropic's own Messages body: `InvokeModel` (`POST /model/{id}/invoke`)
 * and `InvokeModelWithResponseStream` (`/invoke-with-response-stream`), per
 * https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-anthropic-claude-messages.html.
 * The body is the Messages API's minus `model` and `stream` (the path says both), plus
 * `anthropic_version: bedrock-2023-05-31` and the betas as an `anthropic_beta` array (Bedrock
 * takes no `anthropic-beta` header). The stream is the AWS event stream whose `chunk` events
 * carry, base64 in `bytes`, the Anthropic SSE events; once unwrapped, the kit's Anthropic
 * translations read them as they read Anthropic's own.
 */
import type { HttpRequestSpec, ProviderCall, ProviderCapabilities, StreamTranslator } from 'switchyard-gateway';
import { ANTHROPIC_CAPABILITIES, buildAnthropicRequest, createAnthropicStreamTranslator, createConverseStreamTranslator, type AwsStreamEvent } from 'switchyard-gateway/kit';

export const BEDROCK_ANTHROPIC_VERSION = 'bedrock-2023-05-31';

/** Which Bedrock API a target's requests go to. */
export type BedrockApi = 'converse' | 'messages' | 'auto';

/**
 * True for a Claude model id: `anthropic.claude-…`, a cross-region profile `us.anthropic.…`,
 * or an ARN whose last segment is one of those. An application inference profile's ARN does not
 * say its model: such a target sets `api: messages` itself.
 */
export function isAnthropicModel(model: string): boolean {
  const id = model.slice(model.lastIndexOf('/') + 1);
  return id.startsWith('anthropic.') || id.includes('.anthropic.');
}

/** Whether this call goes to InvokeModel with the Messages body. */
export function usesMessages(api: BedrockApi | undefined, model: string): boolean {
  return api === 'messages' || (api === 'auto' && isAnthropicModel(model));
}

/**
 * What a target sent the Messages body honours: the kit's Anthropic translation's declaration
 * (the same as the anthropic plugin's), so `top_k`, `thinking` and web search are carried where
 * Converse reports them dropped. The plugin's declaration is Converse's.
 */
export const MESSAGES_CAPABILITIES: Readonly<ProviderCapabilities> = Object.freeze({
  ...ANTHROPIC_CAPABILITIES,
  extraParams: Object.freeze(['top_k', 'thinking', 'web_search']),
});

export function invokeModelPath(model: string, stream: boolean): string {
  return `/model/${encodeURIComponent(model)}/${stream ? 'invoke-with-response-stream' : 'invoke'}`;
}

/**
 * The InvokeModel request: the client's own Messages body when it spoke Messages (thinking
 * signatures, cache_control and betas unchanged), else the kit's translation of the chat request.
 */
export function buildMessagesRequest(call: ProviderCall, settings: { maxTokens?: number }): HttpRequestSpec {
  const native = call.native?.protocol === 'anthropic-messages' ? call.native : undefined;
  const body = native ? { ...native.body } : buildAnthropicRequest(call, { maxTokens: settings.maxTokens ?? 4096 });
  return { path: invokeModelPath(call.model, call.stream), body: toBedrockBody(body, native?.headers?.['anthropic-beta']) };
}

/**
 * A client's Messages `count_tokens`, counted as it sent it: Bedrock's CountTokens
 * (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_CountTokens.html) with the
 * InvokeModel body it would serve (`input.invokeModel.body`, a blob: base64 in JSON), so thinking
 * blocks, cache marks and tools count as sent. InvokeModel needs a `max_tokens`, which count_tokens
 * has not: any value that leaves room for the thinking budget (it counts nothing).
 */
export function buildMessagesCountTokensRequest(call: ProviderCall, settings: { maxTokens?: number }): HttpRequestSpec {
  const native = call.native!;
  const body = toBedrockBody({ ...native.body }, native.headers?.['anthropic-beta']);
  const budget = (body.thinking as { budget_tokens?: unknown } | undefined)?.budget_tokens;
  body.max_tokens ??= Math.max(settings.maxTokens ?? 4096, typeof budget === 'number' ? budget + 1 : 0);
  return { path: `/model/${encodeURIComponent(call.model)}/count-tokens`, body: { input: { invokeModel: { body: Buffer.from(JSON.stringify(body)).toString('base64') } } } };
}

/** A Messages API body → Bedrock's: no model or stream, the version and betas in the body. */
export function toBedrockBody(body: Record<string, unknown>, betaHeader: string | undefined): Record<string, unknown> {
  const { model: _model, stream: _stream, ...rest } = body;
  const out: Record<string, unknown> = { anthropic_version: BEDROCK_ANTHROPIC_VERSION, ...rest };
  const betas = (betaHeader ?? '')
    .split(',')
    .map((b) => b.trim())
    .filter(Boolean);
  if (betas.length) out.anthropic_beta = betas;
  return out;
}

/**
 * A decoded event-stream frame → what a translator reads: a `chunk` event becomes the Anthropic
 * SSE event its bytes hold (`{ event, data }`, as the kit's SSE decoder gives); every other frame
 * (Converse events, exceptions) passes as it came.
 */
export function unwrapChunk(event: AwsStreamEvent): unknown {
  if (event.kind !== 'event' || event.type !== 'chunk' || typeof event.payload.bytes !== 'string') return event;
  const raw = Buffer.from(event.payload.bytes, 'base64').toString('utf8');
  const data = JSON.parse(raw) as { type?: unknown };
  return { event: typeof data.type === 'string' ? data.type : 'message', data, raw };
}

/**
 * The Anthropic stream translator, with the event stream's exception frames (a throttle, a
 * validation error mid-stream) failing the attempt as they do on ConverseStream.
 */
export function createMessagesStreamTranslator(call: ProviderCall): StreamTranslator {
  const anthropic = createAnthropicStreamTranslator(call);
  const converse = createConverseStreamTranslator(call);
  return {
    ...anthropic,
    push(event) {
      const kind = (event as Partial<AwsStreamEvent> | undefined)?.kind;
      if (kind === 'exception' || kind === 'error') return converse.push(event);
      return anthropic.push(event);
    },
  };
}
