/**
 * POST /v1/responses (OpenAI Responses API): a stateless translation to chat and back, so every
 * provider serves it through the same pipeline (src/ingress/responses). Errors are OpenAI's
 * envelope, as on chat.
 */
import type { ServerResponse } from 'node:http';
import type { GatewayError } from '../../errors.ts';
import {
  chatRequestOf,
  chatToResponse,
  readResponsesRequest,
  ResponsesStreamWriter,
  responseIds,
  toSse,
  type ResponseIds,
  type ResponsesEvent,
  type ResponsesRequest,
} from '../../ingress/responses/index.ts';
import type { ChatCompletion, ChatCompletionChunk } from '../../openai-types.ts';
import type { RequestContext } from '../../plugin-api.ts';
import { writeEventStream, type EventWriter } from '../events.ts';
import { servePipeline, type IngressProtocol } from '../ingress.ts';
import { sendError } from '../respond.ts';
import type { RouteModule } from '../surface.ts';

const PATHS = ['/v1/responses', '/responses'] as const;

/** The client's Responses request and the ids of its answer, per request context. */
const requests = new WeakMap<RequestContext, { request: ResponsesRequest; ids: ResponseIds }>();

const responses: IngressProtocol = {
  name: 'responses',
  operation: 'chat',
  toPipeline(body, ctx) {
    const request = readResponsesRequest(body);
    requests.set(ctx, { request, ids: responseIds(ctx.id) });
    return chatRequestOf(request);
  },
  answer(completion, ctx) {
    const { request, ids } = requests.get(ctx)!;
    return chatToResponse(completion as ChatCompletion, request, ids);
  },
  stream(res: ServerResponse, ctx, chunks: AsyncIterable<ChatCompletionChunk>, toClientError) {
    const { request, ids } = requests.get(ctx)!;
    const writer = new ResponsesStreamWriter(request, ids);
    const events: EventWriter<ResponsesEvent> = {
      push: (chunk) => writer.push(chunk),
      end: () => writer.end(),
      fail: (error: GatewayError) => writer.fail(error),
      toSse,
      // response.created / in_progress say nothing about the answer: held until the first output.
      isOutput: (e) => e.type !== 'response.created' && e.type !== 'response.in_progress',
    };
    return writeEventStream(res, ctx, chunks, events, writer.start(), toClientError, (error) => sendError(res, ctx, error));
  },
};

export const responsesRoutes: RouteModule = {
  surface: [{ pattern: /^\/(v1\/)?responses\/?$/, method: 'POST' }],
  register(app, deps) {
    const handler = servePipeline(deps, responses);
    for (const path of PATHS) app.post(path, handler);
  },
};
