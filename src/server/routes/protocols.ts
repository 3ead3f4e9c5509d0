/** The ways in (src/ingress/protocols.ts): each protocol's paths, served by the one pipeline handler. */
import type { Protocol } from '../../ingress/protocol.ts';
import { servePipeline } from '../serve.ts';
import type { RouteModule } from '../surface.ts';

export function protocolRoutes(protocols: readonly Protocol[]): RouteModule {
  return {
    surface: protocols.flatMap((p) => p.paths.map((path) => ({ pattern: pathPattern(path), method: 'POST' }))),
    register(app, deps) {
      for (const protocol of protocols) {
        const handler = servePipeline(deps, protocol);
        for (const path of protocol.paths) app.post(path, handler);
      }
    },
  };
}

/** A fastify path as a pattern for the URL (`:name` → one segment), to tell 404 from 405. */
export function pathPattern(path: string): RegExp {
  const segments = path.split('/').map((s) => (s.startsWith(':') ? '[^/]+' : s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
  return new RegExp(`^${segments.join('/')}/?$`);
}
