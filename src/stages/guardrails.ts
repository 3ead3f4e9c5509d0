/**
 * `guardrails`: PII, secrets and custom rules on the request and the answer, per key, team or
 * model alias. It sits between `route` (it needs the key and the alias) and `retry`; the
 * detectors load only when the stage is in the pipeline, and a request no rule covers costs a
 * lookup. Streams stay streams: the answer is checked as it flows (src/guardrails/stream-scan.ts).
 */
import { randomBytes } from 'node:crypto';
import { JUDGE_HEADER } from '../guardrails/judge.ts';
import { defineStage, type JsonSchema } from '../plugin-api.ts';
import type { GuardrailsOptions } from '../guardrails/policy.ts';

const STRINGS = { type: 'array', items: { type: 'string', minLength: 1 } } as const;

const OPTIONS_SCHEMA: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['rules'],
  properties: {
    rules: {
      type: 'object',
      minProperties: 1,
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        properties: {
          detect: STRINGS,
          custom: {
            type: 'array',
            items: {
              type: 'object',
              additionalProperties: false,
              required: ['name'],
              properties: {
                name: { type: 'string', pattern: '^[A-Za-z0-9_.-]+$' },
                label: { type: 'string', pattern: '^[A-Z][A-Z0-9_]*$' },
                regex: { type: 'string', minLength: 1 },
                flags: { type: 'string', pattern: '^[imsu]*$' },
                words: STRINGS,
                caseSensitive: { type: 'boolean' },
                maxLength: { type: 'integer', minimum: 1, maximum: 4096 },
              },
            },
          },
          webhook: {
            type: 'object',
            additionalProperties: false,
            required: ['url'],
            properties: {
              url: { type: 'string', pattern: '^https?://' },
              timeoutMs: { type: 'integer', minimum: 1, maximum: 60000 },
              onError: { enum: ['allow', 'block'] },
              headers: { type: 'object', additionalProperties: { type: 'string' } },
            },
          },
          judge: {
            type: 'object',
            additionalProperties: false,
            required: ['model', 'prompt', 'key'],
            properties: {
              model: { type: 'string', minLength: 1 },
              prompt: { type: 'string', pattern: '\\{\\{text\\}\\}' },
              key: { type: 'string', minLength: 1 },
              blockWhen: { type: 'string', minLength: 1 },
              timeoutMs: { type: 'integer', minimum: 1, maximum: 120000 },
              onError: { enum: ['allow', 'block'] },
            },
          },
          action: { enum: ['block', 'redact', 'log'] },
          restore: { type: 'boolean' },
          on: { type: 'array', items: { enum: ['request', 'answer'] }, minItems: 1 },
          phone: { type: 'object', additionalProperties: false, properties: { regions: { type: 'array', items: { type: 'string', pattern: '^[A-Z]{2}$' } } } },
        },
      },
    },
    apply: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['rules'],
        properties: { rules: STRINGS, models: STRINGS, keys: STRINGS, teams: STRINGS },
      },
    },
  },
};

export default defineStage<GuardrailsOptions>({
  apiVersion: 2,
  kind: 'stage',
  name: 'guardrails',
  description: 'PII, secret and custom rules on requests and answers (block, redact and restore, log)',
  optionsSchema: OPTIONS_SCHEMA,
  async create(options, env) {
    // Loaded here, not at startup: the detectors' data (phone metadata, IBAN registry) costs nothing unless used.
    const [{ compileGuardrails }, { GuardedRequest }] = await Promise.all([import('../guardrails/policy.ts'), import('../guardrails/guarded.ts')]);
    const guardrails = compileGuardrails(options);
    // Marks the judges' own requests: they pass the guardrails unjudged, and no client can forge the mark.
    const judgeMark = randomBytes(16).toString('hex');
    return {
      name: 'guardrails',
      async handle(ctx, next) {
        if (ctx.headers[JUDGE_HEADER] === judgeMark) return next();
        // `models` globs match the alias (a pattern alias by its pattern) or the name the client asked for.
        const asked = typeof ctx.body.model === 'string' ? ctx.body.model : undefined;
        const who = { key: ctx.key?.name, team: ctx.key?.team };
        const rules = guardrails.select({ ...who, model: ctx.route?.name }) ?? (asked !== ctx.route?.name ? guardrails.select({ ...who, model: asked }) : undefined);
        if (rules) {
          const meta = {
            requestId: ctx.id,
            ...who,
            model: ctx.route?.name ?? asked,
            signal: ctx.signal,
            selfUrl: env.runtime.selfUrl?.() || undefined,
            judgeMark,
            log: (rule: string, err: unknown) => ctx.log.warn({ reqId: ctx.id, rule, err: String((err as Error)?.message ?? err) }, 'a guardrail could not check: let through (onError: allow)'),
          };
          const guarded = new GuardedRequest(rules, meta, (verdicts) => ctx.annotate('guardrails', verdicts));
          await guarded.checkRequest(ctx.body);
          const transform = guarded.answerTransform();
          if (transform) ctx.transformAnswer(transform);
        }
        await next();
      },
    };
  },
});
