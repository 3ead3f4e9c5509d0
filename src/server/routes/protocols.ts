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

/**
 * A fastify path as a pattern for the URL, to tell 404 from 405: `:name` is one segment's text,
 * `:name(regex)` text that matches the regex, `::` a literal colon (Gemini's
 * `/v1beta/models/:model(^[^/]+)::generateContent`).
 */
export function pathPattern(path: string): RegExp {
  return new RegExp(`^${patternOf(path)}/?$`);
}

const PARAMETER = /^:\w+(?:\((.*?)\))?(?=::|$|[^\w(])/;

function patternOf(path: string): string {
  let out = '';
  let rest = path;
  while (rest) {
    if (rest.startsWith('::')) {
      out += ':';
      rest = rest.slice(2);
      continue;
    }
    const parameter = rest.startsWith(':') ? PARAMETER.exec(rest) : null;
    if (parameter) {
      out += parameter[1] === undefined ? '[^/]+' : `(?:${parameter[1].replace(/^\^/, '').replace(/\$$/, '')})`;
      rest = rest.slice(parameter[0].length);
      continue;
    }
    out += rest[0].replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    rest = rest.slice(1);
  }
  return out;
}
