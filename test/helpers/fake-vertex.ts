/**
 * A fake Vertex AI on 127.0.0.1 that speaks Vertex's wire: Gemini `generateContent` (JSON),
 * `streamGenerateContent?alt=sse`, `countTokens` and text-embedding `predict`; Claude `rawPredict`
 * and `streamRawPredict` (Anthropic's Messages, `anthropic_version: vertex-2023-10-16` in the
 * body and no `model`) and the `count-tokens` model. It accepts only a bearer token the
 * emulator issued and that has not expired (or, for Express mode, the API key it was given, on
 * the project-less paths), answering Google's 401 otherwise, as Vertex does.
 */
import { fakeUpstream, loadFixture, replay, streamAnswer, type FakeUpstream, type RecordedRequest, type ScriptedResponse } from 'switchyard-gateway/kit/testing';
import type { GoogleEmulator } from './google-emulator.ts';
import { fixturesOf } from './repo.ts';

export const VERTEX_PATH = /^\/(v1|v1beta1)\/(?:projects\/([^/]+)\/locations\/([^/]+)\/)?publishers\/(google|anthropic)\/models\/([^:/]+):([A-Za-z]+)(\?.*)?$/;
/** The signature the fake puts on Claude's thinking blocks; a client must send it back unchanged. */
export const THINKING_SIGNATURE = 'EqQBCkYIBxgCKkDvertex-emulator-signature-0123456789abcdef==';

function googleError(status: number, code: string, message: string): ScriptedResponse {
  return { status, body: { error: { code: status, message, status: code } } };
}

function anthropicError(status: number, type: string, message: string): ScriptedResponse {
  return { status, body: { type: 'error', error: { type, message } } };
}

const sse = (data: unknown) => `data: ${JSON.stringify(data)}\r\n\r\n`;
const named = (event: string, data: unknown) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

export interface FakeVertexOptions {
  project: string;
  /** The Express mode key it accepts on project-less paths. */
  apiKey?: string;
}

export function fakeVertex(emulator: GoogleEmulator, options: FakeVertexOptions): FakeUpstream {
  return fakeUpstream((req) => answer(emulator, options, req));
}

function answer(emulator: GoogleEmulator, options: FakeVertexOptions, req: RecordedRequest): ScriptedResponse {
  const match = VERTEX_PATH.exec(req.url);
  if (!match || req.method !== 'POST') return googleError(404, 'NOT_FOUND', `The requested URL ${req.url} was not found on this server.`);
  const [, , project, , publisher, model, method, query = ''] = match;
  const key = req.headers['x-goog-api-key'] ?? new URLSearchParams(query.slice(1)).get('key') ?? undefined;
  if (key !== undefined) {
    if (key !== options.apiKey) return googleError(400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.');
    if (project !== undefined) return googleError(401, 'UNAUTHENTICATED', 'API keys are not supported by this API. Expected OAuth2 access token.');
  } else {
    const bearer = /^Bearer (.+)$/.exec(String(req.headers.authorization ?? ''))?.[1];
    if (!emulator.valid(bearer)) {
      return googleError(401, 'UNAUTHENTICATED', 'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.');
    }
    if (project !== options.project) return googleError(403, 'PERMISSION_DENIED', `Permission denied on resource project ${project}.`);
  }
  if (publisher === 'google') return gemini(model, method, query, req.body);
  return claude(model, method, req.body);
}

function gemini(model: string, method: string, query: string, body: Record<string, unknown>): ScriptedResponse {
  if (method === 'predict') {
    const instances = body.instances as Array<{ content: string }> | undefined;
    if (!Array.isArray(instances)) return googleError(400, 'INVALID_ARGUMENT', 'instances is required');
    const dimensions = (body.parameters as { outputDimensionality?: number } | undefined)?.outputDimensionality ?? 4;
    return {
      body: {
        predictions: instances.map((instance, i) => ({
          embeddings: {
            statistics: { truncated: false, token_count: instance.content.split(/\s+/).length },
            values: Array.from({ length: dimensions }, (_, d) => Number(((i + 1) / 10 + d / 100).toFixed(2))),
          },
        })),
        metadata: { billableCharacterCount: instances.reduce((n, x) => n + x.content.length, 0) },
      },
    };
  }
  if (!Array.isArray(body.contents)) return googleError(400, 'INVALID_ARGUMENT', 'Invalid JSON payload received. Unknown name "model" or missing "contents".');
  if ('model' in body && method !== 'countTokens') return googleError(400, 'INVALID_ARGUMENT', 'Invalid JSON payload received. Unknown name "model": Cannot find field.');
  if (method === 'countTokens') {
    if ('generateContentRequest' in body) return googleError(400, 'INVALID_ARGUMENT', 'Invalid JSON payload received. Unknown name "generateContentRequest": Cannot find field.');
    return { body: { totalTokens: JSON.stringify(body.contents).length, totalBillableCharacters: 42 } };
  }
  const usage = { promptTokenCount: 7, candidatesTokenCount: 4, totalTokenCount: 11, trafficType: 'ON_DEMAND' };
  const candidate = (text: string, finishReason?: string) => ({ content: { role: 'model', parts: [{ text }] }, ...(finishReason && { finishReason }) });
  if (method === 'generateContent') {
    return { body: { candidates: [candidate(`Hello from ${model} on Vertex.`, 'STOP')], usageMetadata: usage, modelVersion: model, createTime: new Date().toISOString(), responseId: 'vtx-1' } };
  }
  if (method === 'streamGenerateContent') {
    if (query !== '?alt=sse') return googleError(400, 'INVALID_ARGUMENT', 'expected alt=sse');
    return streamAnswer([
      sse({ candidates: [candidate('Hello from ')], usageMetadata: { trafficType: 'ON_DEMAND' }, modelVersion: model, responseId: 'vtx-2' }),
      sse({ candidates: [candidate(`${model} on Vertex.`, 'STOP')], usageMetadata: usage, modelVersion: model, responseId: 'vtx-2' }),
    ]);
  }
  return googleError(400, 'INVALID_ARGUMENT', `method ${method} is not served for publisher models`);
}

function claude(model: string, method: string, body: Record<string, unknown>): ScriptedResponse {
  if (body.anthropic_version !== 'vertex-2023-10-16') return anthropicError(400, 'invalid_request_error', "anthropic_version: Input should be 'vertex-2023-10-16'");
  if (model === 'count-tokens') {
    if (typeof body.model !== 'string') return anthropicError(400, 'invalid_request_error', 'model: Field required');
    return { body: { input_tokens: JSON.stringify(body.messages).length } };
  }
  if ('model' in body) return anthropicError(400, 'invalid_request_error', 'model: Extra inputs are not permitted');
  if (!Array.isArray(body.messages) || typeof body.max_tokens !== 'number') return anthropicError(400, 'invalid_request_error', 'messages and max_tokens are required');
  const thinking = (body.thinking as { type?: string } | undefined)?.type === 'enabled';
  const usage = { input_tokens: 21, output_tokens: 9, cache_creation_input_tokens: 0, cache_read_input_tokens: hasCacheControl(body) ? 12 : 0 };
  if (method === 'rawPredict') {
    if (body.stream) return anthropicError(400, 'invalid_request_error', 'stream is for :streamRawPredict');
    const content = [...(thinking ? [{ type: 'thinking', thinking: 'The user greets me.', signature: THINKING_SIGNATURE }] : []), { type: 'text', text: `Hello from ${model} on Vertex.` }];
    return { body: { id: 'msg_vrtx_01', type: 'message', role: 'assistant', model, content, stop_reason: 'end_turn', stop_sequence: null, usage } };
  }
  if (method === 'streamRawPredict') {
    if (body.stream !== true) return anthropicError(400, 'invalid_request_error', 'stream: true is required on :streamRawPredict');
    if (thinking) return replay(loadFixture(fixturesOf('anthropic'), 'stream-thinking'));
    return streamAnswer([
      named('message_start', {
        type: 'message_start',
        message: { id: 'msg_vrtx_02', type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } },
      }),
      named('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
      named('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: `Hello from ${model}` } }),
      named('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: ' on Vertex.' } }),
      named('content_block_stop', { type: 'content_block_stop', index: 0 }),
      named('message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 9 } }),
      named('message_stop', { type: 'message_stop' }),
    ]);
  }
  return googleError(400, 'INVALID_ARGUMENT', `method ${method} is not served for Claude models`);
}

function hasCacheControl(value: unknown): boolean {
  if (!value || typeof value !== 'object') return false;
  if (Array.isArray(value)) return value.some(hasCacheControl);
  return Object.entries(value).some(([k, v]) => k === 'cache_control' || hasCacheControl(v));
}
