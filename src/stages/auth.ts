/**
 * `auth`: `Authorization: Bearer <key>` → the key's identity (401 when missing or unknown), and
 * 403 when the key's `models` globs do not cover the model asked for; an expired key, or a
 * previous secret past its `until` (a finished rotation), is 401 with a message that says so.
 * The key itself is never logged or echoed.
 */
import { defineStage, type KeyIdentity, type RequestContext, type RuntimeView } from '../plugin-api.ts';
import { GatewayError } from '../errors.ts';

/** Reads the bearer token and finds its key; shared with GET /v1/models. */
export function authenticate(headers: RequestContext['headers'], runtime: RuntimeView): KeyIdentity {
  const header = headers.authorization;
  // The Anthropic SDKs (and Claude Code) send the key as x-api-key; Google's SDKs and Gemini CLI as x-goog-api-key.
  const apiKey = headers['x-api-key'] ?? headers['x-goog-api-key'];
  if (!header && typeof apiKey === 'string' && apiKey.trim()) return known(apiKey.trim(), runtime);
  if (!header) {
    throw new GatewayError('invalid_api_key', 'Missing API key: send it as "Authorization: Bearer <key>" (or "x-api-key: <key>", "x-goog-api-key: <key>").');
  }
  const token = /^bearer\s+(.+)$/i.exec(header)?.[1]?.trim();
  if (!token) throw new GatewayError('invalid_api_key', 'Malformed Authorization header: expected "Bearer <key>".');
  return known(token, runtime);
}

function known(token: string, runtime: RuntimeView): KeyIdentity {
  const key = runtime.findKey(token);
  if (!key) throw new GatewayError('invalid_api_key', 'Incorrect API key provided.');
  return key;
}

export default defineStage({
  apiVersion: 2,
  kind: 'stage',
  name: 'auth',
  description: 'Bearer key → key identity; model scopes',
  create(_options, { runtime, clock }) {
    const identify = (headers: RequestContext['headers']): KeyIdentity => {
      const key = authenticate(headers, runtime);
      if (key.expiresAt !== undefined && clock.now() >= key.expiresAt) {
        throw new GatewayError('invalid_api_key', `The API key "${key.name}" expired at ${new Date(key.expiresAt).toISOString()}.`);
      }
      // The presented secret is one the key was rotated away from, and its overlap has ended.
      if (key.retiresAt !== undefined && clock.now() >= key.retiresAt) {
        throw new GatewayError(
          'invalid_api_key',
          `This API key was rotated: it is a previous secret of the key "${key.name}" and stopped working at ${new Date(key.retiresAt).toISOString()}. Use the key's new secret.`,
        );
      }
      return key;
    };
    return {
      name: 'auth',
      identify,
      // Not async: the refusal is a rejected promise, the rest is next()'s own (no wrapper promise per request).
      handle(ctx, next) {
        let key: KeyIdentity;
        try {
          key = identify(ctx.headers);
        } catch (err) {
          return Promise.reject(err);
        }
        ctx.key = key;
        const model = ctx.body?.model;
        // Only known models are checked here: an unknown one gets route's 404, as OpenAI does. A key's
        // globs may name the alias (a pattern alias by its pattern) or the model names it covers.
        const alias = typeof model === 'string' ? runtime.resolveModel(model) : undefined;
        if (typeof model === 'string' && alias && !key.allows(alias.name) && !key.allows(model)) {
          return Promise.reject(new GatewayError('model_not_allowed', `The key "${key.name}" may not use the model "${model}".`, { param: 'model' }));
        }
        return next();
      },
    };
  },
});
