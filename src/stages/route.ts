/** `route`: the model name the client asked for → its alias in gateway.yaml (404 when unknown). */
import { defineStage } from '../plugin-api.ts';
import { GatewayError } from '../errors.ts';

export default defineStage({
  apiVersion: 2,
  kind: 'stage',
  name: 'route',
  description: 'Model alias → targets',
  create(_options, { runtime }) {
    return {
      name: 'route',
      // Not async: the refusal is a rejected promise, the rest is next()'s own (no wrapper promise per request).
      handle(ctx, next) {
        const model = ctx.body?.model;
        const route = typeof model === 'string' ? runtime.resolveModel(model) : undefined;
        if (!route) {
          const name = typeof model === 'string' ? model : String(model);
          return Promise.reject(
            new GatewayError('model_not_found', `The model \`${name}\` does not exist or you do not have access to it. GET /v1/models lists the models your key may use.`, { param: 'model' }),
          );
        }
        ctx.route = route;
        return next();
      },
    };
  },
});
