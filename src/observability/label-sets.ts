/**
 * The label sets the gateway's metrics observe with, made once (per key, alias, target or error
 * code of a config generation) and reused: a request builds no label object and hashes none.
 */
import type { AttemptRecord, ModelRoute, Operation, RouteTarget } from '../plugin-api.ts';
import { OPERATION_CHAT, OPERATION_EMBEDDINGS } from './semconv.ts';

/** What became of one attempt, seen from the whole request. */
export type AttemptOutcome = 'succeeded' | 'retried' | 'failed_over' | 'failed' | 'skipped';

export const GENAI_LABELS = ['gen_ai_operation_name', 'gen_ai_provider_name', 'gen_ai_request_model', 'gen_ai_response_model'] as const;
export type GenAiLabels = Record<(typeof GENAI_LABELS)[number], string>;
/** An (alias, target)'s GenAI labels, with the token type added for the token histogram, and with each error type seen. */
export interface GenAiLabelSets {
  base: GenAiLabels;
  input: GenAiLabels & { gen_ai_token_type: string };
  output: GenAiLabels & { gen_ai_token_type: string };
  /** By error code: catalogue codes or _other, so as few as the catalogue. */
  failed: Map<string, GenAiLabels & { error_type: string }>;
}

/** A key's label values and the label sets it uses: made once per key of a generation and reused, not made per request. */
export interface KeyLabels {
  key: string;
  team: string;
  byModel: Map<string, { input: TokenLabels; output: TokenLabels; cost: CostLabels }>;
  /** By alias, provider, status and code. */
  requests: Map<string, RequestLabels>;
  /** The label set of this key's last request: most requests of a key look like its last, found without building a map key. */
  last?: RequestLabels;
}
export type CostLabels = Readonly<{ key: string; team: string; model: string }>;
export type TokenLabels = Readonly<{ key: string; team: string; model: string; type: string }>;
export type AttemptLabels = Readonly<{ provider: string; target: string; outcome: AttemptOutcome }>;
export type RequestLabels = Readonly<{ key: string; team: string; model: string; provider: string; status: string; code: string }>;

/** Every value comes from gateway.yaml or a fixed set, so the map stays as small as the series. */
export function requestLabels(who: KeyLabels, model: string, provider: string, status: string, code: string): RequestLabels {
  const last = who.last;
  if (last && last.model === model && last.provider === provider && last.status === status && last.code === code) return last;
  const id = `${model}\n${provider}\n${status}\n${code}`;
  let labels = who.requests.get(id);
  if (!labels) who.requests.set(id, (labels = Object.freeze({ key: who.key, team: who.team, model, provider, status, code })));
  who.last = labels;
  return labels;
}

/** The token and cost label sets of a key on an alias: the aliases are gateway.yaml's (or _other), so the map stays small. */
export function modelLabelSets(who: KeyLabels, model: string): { input: TokenLabels; output: TokenLabels; cost: CostLabels } {
  let sets = who.byModel.get(model);
  if (!sets) {
    const { key, team } = who;
    sets = {
      input: Object.freeze({ key, team, model, type: 'input' }),
      output: Object.freeze({ key, team, model, type: 'output' }),
      cost: Object.freeze({ key, team, model }),
    };
    who.byModel.set(model, sets);
  }
  return sets;
}

/** An (alias, target)'s GenAI label sets for an operation. */
export function genAiLabelSets(route: ModelRoute, target: RouteTarget, operation: Operation): GenAiLabelSets {
  const base = Object.freeze({
    gen_ai_operation_name: operation === 'embeddings' ? OPERATION_EMBEDDINGS : OPERATION_CHAT,
    gen_ai_provider_name: target.provider,
    gen_ai_request_model: route.name,
    gen_ai_response_model: target.model,
  });
  return { base, input: Object.freeze({ ...base, gen_ai_token_type: 'input' }), output: Object.freeze({ ...base, gen_ai_token_type: 'output' }), failed: new Map() };
}

/** The operation's labels with the error type the client got. */
export function failedLabels(sets: GenAiLabelSets, code: string): GenAiLabels & { error_type: string } {
  let labels = sets.failed.get(code);
  if (!labels) sets.failed.set(code, (labels = Object.freeze({ ...sets.base, error_type: code })));
  return labels;
}

/** What became of `records[i]`: a failure is a retry when the next attempt made went to the same target, a failover when to another. */
export function attemptOutcome(records: readonly AttemptRecord[], i: number): AttemptOutcome {
  const r = records[i];
  if (r.outcome === 'ok') return 'succeeded';
  if (r.outcome === 'skipped') return 'skipped';
  for (let j = i + 1; j < records.length; j++) {
    const next = records[j];
    if (next.outcome === 'skipped') continue;
    return next.provider === r.provider && next.model === r.model ? 'retried' : 'failed_over';
  }
  return 'failed';
}
