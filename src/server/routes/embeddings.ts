/** POST /v1/embeddings: routed by model alias like chat, served by the providers that embed. */
import { servePipeline, type IngressProtocol } from '../ingress.ts';
import type { RouteModule } from '../surface.ts';

export const EMBEDDINGS_PATHS = ['/v1/embeddings', '/embeddings'] as const;

const embeddings: IngressProtocol = {
  name: 'embeddings',
  operation: 'embeddings',
  // Validated by the `validate` stage against the embeddings schema, like chat bodies.
  toPipeline: (body) => body as never,
  answer: (response) => response,
};

export const embeddingRoutes: RouteModule = {
  surface: [{ pattern: /^\/(v1\/)?embeddings\/?$/, method: 'POST' }],
  register(app, deps) {
    const handler = servePipeline(deps, embeddings);
    for (const path of EMBEDDINGS_PATHS) app.post(path, handler);
  },
};
