/**
 * Example stage: tags each request with its team (from the key name) in an `x-team` response
 * header and the log, and refuses requests whose messages match a configured pattern (say, a
 * cloud credential) with an OpenAI-shaped 400 before anything reaches a provider.
 *
 *   pipeline: [auth, validate, { stage: ./plugins/examples/team-policy, options: { teams: { dev: platform }, block: ["AKIA[0-9A-Z]{16}"] } }, route, retry, transform-response, log]
 */
import { defineStage, type RequestContext } from 'switchyard-gateway';
import { GatewayError } from 'switchyard-gateway/kit';

export interface TeamPolicyOptions {
  /** Key name → team. Keys not listed are tagged with `defaultTeam`. */
  teams?: Record<string, string>;
  defaultTeam?: string;
  /** Regular expressions; a request whose message text matches any is refused. */
  block?: string[];
}

/** Every text the user or the system sent, as one string to match against. */
function messageText(messages: unknown): string {
  if (!Array.isArray(messages)) return '';
  let text = '';
  for (const m of messages as Array<{ content?: unknown }>) {
    if (typeof m.content === 'string') text += `${m.content}\n`;
    else if (Array.isArray(m.content)) for (const part of m.content as Array<{ type?: string; text?: string }>) if (part.type === 'text') text += `${part.text}\n`;
  }
  return text;
}

export default defineStage<TeamPolicyOptions>({
  apiVersion: 2,
  kind: 'stage',
  name: 'team-policy',
  description: 'Tags requests with a team and blocks configured patterns',
  optionsSchema: {
    type: 'object',
    additionalProperties: false,
    properties: {
      teams: { type: 'object', additionalProperties: { type: 'string' } },
      defaultTeam: { type: 'string', default: 'unassigned' },
      block: { type: 'array', items: { type: 'string', minLength: 1 } },
    },
  },
  create(options, { log }) {
    // Compiled once per config load, not per request; an invalid pattern fails the load.
    const patterns = (options.block ?? []).map((p) => new RegExp(p));
    const teams = options.teams ?? {};
    // Per-request data belongs to the stage: keyed by the request's context, gone with it.
    const teamOf = new WeakMap<RequestContext, string>();
    return {
      name: 'team-policy',
      async handle(ctx, next) {
        const team = (ctx.key && teams[ctx.key.name]) ?? options.defaultTeam ?? 'unassigned';
        teamOf.set(ctx, team);
        ctx.responseHeaders['x-team'] = team;
        if (patterns.length) {
          const text = messageText(ctx.body.messages);
          const hit = patterns.find((p) => p.test(text));
          if (hit) {
            log.warn({ reqId: ctx.id, team, pattern: hit.source }, 'request blocked by team-policy');
            throw new GatewayError('invalid_request', 'This request was blocked by the gateway policy: its messages contain content that may not be sent to a model provider.', { param: 'messages' });
          }
        }
        await next();
      },
      onResponse(ctx, outcome) {
        log.debug({ reqId: ctx.id, team: teamOf.get(ctx), status: outcome.status, tokens: outcome.usage?.total_tokens }, 'team usage');
      },
    };
  },
});
