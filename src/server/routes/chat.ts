/** POST /v1/chat/completions: the gateway's own protocol, through the pipeline as it is. */
import type { ChatCompletion } from '../../openai-types.ts';
import { servePipeline, type IngressProtocol } from '../ingress.ts';
import { sendStream } from '../respond.ts';
import type { RouteModule } from '../surface.ts';

export const CHAT_PATHS = ['/v1/chat/completions', '/chat/completions'] as const;

const chat: IngressProtocol = {
  name: 'chat',
  operation: 'chat',
  toPipeline: (body) => body as ChatCompletion as never,
  answer: (completion) => completion,
  stream: sendStream,
};

export const chatRoutes: RouteModule = {
  surface: [{ pattern: /^\/(v1\/)?chat\/completions\/?$/, method: 'POST' }],
  register(app, deps) {
    const handler = servePipeline(deps, chat);
    for (const path of CHAT_PATHS) app.post(path, handler);
  },
};
