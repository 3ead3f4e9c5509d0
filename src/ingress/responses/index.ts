/**
 * The OpenAI Responses API (`POST /v1/responses`) as a stateless translation over the gateway's
 * chat model: the request becomes a chat request any provider serves, and its chat completion or
 * chunk stream becomes a `response` object or the Responses event stream.
 *
 * @example The route, in outline
 * const request = readResponsesRequest(body);            // 400s for what cannot be honoured
 * const chat = chatRequestOf(request);                   // run through the pipeline as chat
 * const ids = responseIds(ctx.id);
 * // JSON:   chatToResponse(completion, request, ids)
 * // stream: const w = new ResponsesStreamWriter(request, ids);
 * //         w.start(), w.push(chunk) per chunk, w.end(); w.fail(error) if it breaks; each event via toSse
 */
export { readResponsesRequest, responsesToChat, chatRequestOf } from './request.ts';
export { inputToMessages } from './input.ts';
export { chatToResponse, usageOf } from './response.ts';
export { ResponsesStreamWriter, toSse } from './stream.ts';
export { responseIds, type ResponseIds, type ItemKind } from './ids.ts';
export { responseErrorOf } from './errors.ts';
export type * from './types.ts';
