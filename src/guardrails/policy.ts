/**
 * Guardrail rules as gateway.yaml gives them, compiled once per config generation, and which of
 * them cover a request (by key, team, model alias). What a request's rules do is guarded.ts.
 */
import { compileGlob } from '../config/glob.ts';
import { detectorsFor, type CustomRule, type Detector } from './detect/index.ts';
import type { JudgeOptions } from './judge.ts';
import type { WebhookOptions } from './webhook.ts';

export type GuardAction = 'block' | 'redact' | 'log';
export type GuardSite = 'request' | 'answer';

export interface RuleOptions {
  /** Built-in detectors and presets: `pii`, `secrets`, `email`, `card`... */
  detect?: readonly string[];
  custom?: readonly CustomRule[];
  /** An external guard; its answer decides the action. */
  webhook?: WebhookOptions;
  /** One of the gateway's aliases asked whether the text breaks a policy: block or allow. */
  judge?: JudgeOptions;
  /** What the detectors' findings do (not for a webhook rule: its guard decides). */
  action?: GuardAction;
  /** With `redact`: the originals put back into the answer (the user sees them, the provider never did). */
  restore?: boolean;
  /** Where the rule looks (default both). */
  on?: readonly GuardSite[];
  phone?: { regions?: readonly string[] };
}

export interface ApplyOptions {
  rules: readonly string[];
  /** Model aliases (globs with `*`) the entry covers; any when absent. */
  models?: readonly string[];
  keys?: readonly string[];
  teams?: readonly string[];
}

export interface GuardrailsOptions {
  rules: Readonly<Record<string, RuleOptions>>;
  /** Which rules apply to which requests; default every rule to every request. */
  apply?: readonly ApplyOptions[];
}

export interface Rule {
  name: string;
  action: GuardAction;
  restore: boolean;
  request: boolean;
  answer: boolean;
  detectors: readonly Detector[];
  webhook?: WebhookOptions;
  judge?: JudgeOptions;
}

export interface CompiledGuardrails {
  rules: readonly Rule[];
  /** The rules for a request, or undefined when none apply (the stage then does nothing). */
  select(who: { model?: string; key?: string; team?: string }): readonly Rule[] | undefined;
}

export function compileGuardrails(options: GuardrailsOptions): CompiledGuardrails {
  const rules = new Map<string, Rule>();
  for (const [name, r] of Object.entries(options.rules)) {
    const detectors = detectorsFor(r.detect ?? [], r.custom ?? [], { phone: r.phone });
    const kinds = [detectors.length > 0, r.webhook !== undefined, r.judge !== undefined].filter(Boolean).length;
    if (kinds > 1) throw new Error(`guardrail rule "${name}": a rule has detectors, a webhook or a judge, one of them (make one rule each)`);
    if (kinds === 0) throw new Error(`guardrail rule "${name}" detects nothing: give detect, custom, webhook or judge`);
    if (detectors.length && !r.action) throw new Error(`guardrail rule "${name}" needs an action (block, redact or log)`);
    if (r.judge?.blockWhen !== undefined) {
      try {
        RegExp(r.judge.blockWhen);
      } catch (err) {
        throw new Error(`guardrail rule "${name}": judge.blockWhen is not a regular expression (${(err as Error).message})`);
      }
    }
    const on = r.on ?? ['request', 'answer'];
    // A webhook's guard decides per call; `redact` is the strongest thing it may ask of a stream it cannot stop.
    const action = r.action ?? 'redact';
    rules.set(name, {
      name,
      action,
      restore: action === 'redact' && r.restore === true,
      request: on.includes('request'),
      answer: on.includes('answer'),
      detectors,
      webhook: r.webhook,
      judge: r.judge,
    });
  }
  const entries = (options.apply ?? [{ rules: [...rules.keys()] }]).map((a) => {
    for (const name of a.rules) if (!rules.has(name)) throw new Error(`guardrails apply names an unknown rule "${name}" (rules: ${[...rules.keys()].join(', ')})`);
    return { rules: a.rules.map((n) => rules.get(n) as Rule), models: a.models?.map(compileGlob), keys: a.keys, teams: a.teams };
  });
  return {
    rules: [...rules.values()],
    select(who) {
      let out: Rule[] | undefined;
      for (const e of entries) {
        if (e.models && !(who.model !== undefined && e.models.some((m) => m.test(who.model as string)))) continue;
        if (e.keys && !(who.key !== undefined && e.keys.includes(who.key))) continue;
        if (e.teams && !(who.team !== undefined && e.teams.includes(who.team))) continue;
        for (const r of e.rules) if (!out?.includes(r)) (out ??= []).push(r);
      }
      return out;
    },
  };
}
