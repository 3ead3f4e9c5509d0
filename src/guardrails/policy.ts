/**
 * Guardrail rules applied to one request: which rules cover it (by key, team, model alias),
 * the request's text checked and redacted in place, and the answer's transforms (checked as it
 * flows, placeholders restored). Verdicts name the rule, the action, where and what kind of
 * thing matched: never the matched text.
 */
import { GatewayError } from '../errors.ts';
import type { AnswerTransform } from '../plugin-api.ts';
import type { ChatCompletion, ChatCompletionChunk, ChatCompletionRequest, EmbeddingRequest } from '../openai-types.ts';
import { detectorsFor, scan, type CustomRule, type Detector, type Finding } from './detect/index.ts';
import { StreamScanner } from './stream-scan.ts';
import { Vault } from './vault.ts';

export type GuardAction = 'block' | 'redact' | 'log';
export type GuardSite = 'request' | 'answer';

export interface RuleOptions {
  /** Built-in detectors and presets: `pii`, `secrets`, `email`, `card`... */
  detect?: readonly string[];
  custom?: readonly CustomRule[];
  action: GuardAction;
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
}

/** One decision, for the log line, metrics and the console. */
export interface Verdict {
  rule: string;
  action: GuardAction;
  site: GuardSite;
  /** The kinds found (`EMAIL`, `API_KEY`), with how many. */
  found: Record<string, number>;
}

export interface CompiledGuardrails {
  rules: readonly Rule[];
  /** The rules for a request, or undefined when none apply (the stage then does nothing). */
  select(who: { model?: string; key?: string; team?: string }): readonly Rule[] | undefined;
}

const glob = (pattern: string) => new RegExp(`^${pattern.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`);

export function compileGuardrails(options: GuardrailsOptions): CompiledGuardrails {
  const rules = new Map<string, Rule>();
  for (const [name, r] of Object.entries(options.rules)) {
    const detectors = detectorsFor(r.detect ?? [], r.custom ?? [], { phone: r.phone });
    if (detectors.length === 0) throw new Error(`guardrail rule "${name}" detects nothing: give detect or custom`);
    const on = r.on ?? ['request', 'answer'];
    rules.set(name, { name, action: r.action, restore: r.action === 'redact' && r.restore === true, request: on.includes('request'), answer: on.includes('answer'), detectors });
  }
  const entries = (options.apply ?? [{ rules: [...rules.keys()] }]).map((a) => {
    for (const name of a.rules) if (!rules.has(name)) throw new Error(`guardrails apply names an unknown rule "${name}" (rules: ${[...rules.keys()].join(', ')})`);
    return { rules: a.rules.map((n) => rules.get(n) as Rule), models: a.models?.map(glob), keys: a.keys, teams: a.teams };
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

/** What a request's guardrails decided and hold (the vault of redacted originals). */
export class GuardedRequest {
  readonly verdicts: Verdict[] = [];
  readonly vault = new Vault();
  readonly #rules: readonly Rule[];
  readonly #onFirstVerdict: ((verdicts: readonly Verdict[]) => void) | undefined;

  /** `onFirstVerdict` gets the (growing) list of verdicts once, when there is a first one. */
  constructor(rules: readonly Rule[], onFirstVerdict?: (verdicts: readonly Verdict[]) => void) {
    this.#rules = rules;
    this.#onFirstVerdict = onFirstVerdict;
  }

  /** Checks and redacts the request's text in place (a copy of what it changes); throws the block. */
  checkRequest(body: ChatCompletionRequest | EmbeddingRequest): void {
    const rules = this.#rules.filter((r) => r.request);
    if (rules.length === 0) return;
    const check = (text: string, param: string): string => this.#check(text, rules, 'request', param);
    if ('messages' in body && Array.isArray(body.messages)) {
      body.messages = body.messages.map((m, i) => {
        let changed = m as Record<string, unknown>;
        const content = changed.content;
        if (typeof content === 'string') {
          const next = check(content, `messages[${i}].content`);
          if (next !== content) changed = { ...changed, content: next };
        } else if (Array.isArray(content)) {
          const parts = content.map((p, j) => {
            const part = p as Record<string, unknown>;
            if (typeof part.text !== 'string') return p;
            const next = check(part.text, `messages[${i}].content[${j}].text`);
            return next === part.text ? p : { ...part, text: next };
          });
          if (parts.some((p, j) => p !== content[j])) changed = { ...changed, content: parts };
        }
        const calls = changed.tool_calls;
        if (Array.isArray(calls)) {
          const next = calls.map((c, j) => {
            const call = c as { function?: { arguments?: unknown } };
            const args = call.function?.arguments;
            if (typeof args !== 'string') return c;
            const out = check(args, `messages[${i}].tool_calls[${j}].function.arguments`);
            return out === args ? c : { ...call, function: { ...call.function, arguments: out } };
          });
          if (next.some((c, j) => c !== calls[j])) changed = { ...changed, tool_calls: next };
        }
        return changed as typeof m;
      });
    } else if ('input' in body) {
      const input = body.input;
      if (typeof input === 'string') body.input = check(input, 'input');
      else if (Array.isArray(input) && input.every((x) => typeof x === 'string')) body.input = (input as string[]).map((x, i) => check(x, `input[${i}]`));
    }
  }

  /** The transform of the answer, when a rule looks at it or originals are to be restored. */
  answerTransform(): AnswerTransform | undefined {
    const rules = this.#rules.filter((r) => r.answer);
    const restoring = this.#rules.some((r) => r.restore);
    if (rules.length === 0 && !restoring) return undefined;
    const detectors = detectorsOf(rules);
    return {
      completion: (body) => this.#completion(body, rules),
      stream: (chunks) => this.#stream(chunks, detectors, rules),
    };
  }

  #completion(body: ChatCompletion, rules: readonly Rule[]): ChatCompletion {
    const choices = body.choices.map((choice, i) => {
      const message = { ...choice.message };
      if (typeof message.content === 'string') message.content = this.vault.restore(this.#check(message.content, rules, 'answer', `choices[${i}].message.content`));
      if (message.tool_calls) {
        message.tool_calls = message.tool_calls.map((c, j) => {
          if (c.type !== 'function') return c;
          const checked = this.#check(c.function.arguments, rules, 'answer', `choices[${i}].message.tool_calls[${j}]`);
          return { ...c, function: { ...c.function, arguments: this.vault.restore(checked, jsonInner) } };
        });
      }
      return { ...choice, message };
    });
    return { ...body, choices };
  }

  async *#stream(chunks: AsyncIterable<ChatCompletionChunk>, detectors: readonly Detector[], rules: readonly Rule[]): AsyncIterable<ChatCompletionChunk> {
    // One scanner and restorer per choice's text and per tool call's arguments.
    const lanes = new Map<string, Lane>();
    const lane = (id: string, json: boolean): Lane => {
      let l = lanes.get(id);
      if (!l) lanes.set(id, (l = { scanner: new StreamScanner(detectors), restorer: this.vault.restorer(json ? jsonInner : undefined) }));
      return l;
    };
    const pass = (l: Lane, text: string, final: boolean, where: string): string => {
      const released = final ? l.scanner.end() : l.scanner.push(text);
      const checked = this.#apply(released.text, released.findings, rules, 'answer', where);
      return l.restorer.push(checked) + (final ? l.restorer.end() : '');
    };
    let last: ChatCompletionChunk | undefined;
    for await (const chunk of chunks) {
      last = chunk;
      if (chunk.choices.length === 0) {
        yield chunk;
        continue;
      }
      const choices = chunk.choices.map((choice) => {
        const final = choice.finish_reason != null;
        const delta = { ...choice.delta };
        const text = lane(`c${choice.index}`, false);
        if (typeof delta.content === 'string' || final) {
          const out = pass(text, delta.content ?? '', false, `choices[${choice.index}].delta.content`) + (final ? pass(text, '', true, `choices[${choice.index}].delta.content`) : '');
          if (typeof delta.content === 'string' || out) delta.content = out;
        }
        if (delta.tool_calls) {
          delta.tool_calls = delta.tool_calls.map((c) => {
            const args = c.function?.arguments;
            if (typeof args !== 'string') return c;
            const out = pass(lane(`t${choice.index}.${c.index}`, true), args, false, `choices[${choice.index}].delta.tool_calls[${c.index}]`);
            return { ...c, function: { ...c.function, arguments: out } };
          });
        }
        if (final) {
          // Whatever the tool calls' lanes still hold goes out with the finish.
          const flushed = [...lanes.entries()].filter(([id]) => id.startsWith(`t${choice.index}.`));
          for (const [id, l] of flushed) {
            const rest = pass(l, '', true, `choices[${choice.index}].delta.tool_calls`);
            lanes.delete(id);
            if (rest) (delta.tool_calls ??= []).push({ index: Number(id.split('.')[1]), function: { arguments: rest } });
          }
          lanes.delete(`c${choice.index}`);
        }
        return { ...choice, delta };
      });
      yield { ...chunk, choices };
    }
    // A stream that ended without a finish: what is still held goes out in one last chunk.
    if (last && lanes.size) {
      const choices = [];
      for (const [id, l] of lanes) {
        const rest = pass(l, '', true, 'stream end');
        if (!rest) continue;
        const [choice, tool] = id.slice(1).split('.').map(Number);
        choices.push(
          id.startsWith('c')
            ? { index: choice, delta: { content: rest }, finish_reason: null }
            : { index: choice, delta: { tool_calls: [{ index: tool, function: { arguments: rest } }] }, finish_reason: null },
        );
      }
      if (choices.length) yield { ...last, choices, usage: undefined } as ChatCompletionChunk;
    }
  }

  #check(text: string, rules: readonly Rule[], site: GuardSite, where: string): string {
    return this.#apply(text, scan(text, detectorsOf(rules)), rules, site, where);
  }

  /** Applies the rules' actions to findings in `text`: throws the first block, redacts, records verdicts. */
  #apply(text: string, findings: readonly Finding[], rules: readonly Rule[], site: GuardSite, where: string): string {
    if (findings.length === 0) return text;
    const redact: Finding[] = [];
    for (const f of findings) {
      // Every rule with this detector has its verdict; the strongest action is taken.
      let rule: Rule | undefined;
      for (const r of rules) {
        if (!r.detectors.some((d) => d.id === f.detector)) continue;
        this.#record(r, site, f.label);
        if (!rule || STRENGTH[r.action] > STRENGTH[rule.action]) rule = r;
      }
      if (!rule) continue;
      if (rule.action === 'block') {
        throw new GatewayError(
          'content_policy_violation',
          `Blocked by guardrail "${rule.name}": the ${site === 'request' ? 'request' : 'answer'} contains ${article(f.label)} ${f.label.toLowerCase().replace(/_/g, ' ')} (${where}).`,
          { param: site === 'request' ? where : undefined },
        );
      }
      if (rule.action === 'redact') redact.push(f);
    }
    return this.vault.redact(text, redact);
  }

  #record(rule: Rule, site: GuardSite, label: string): void {
    let v = this.verdicts.find((x) => x.rule === rule.name && x.site === site);
    if (!v) {
      if (this.verdicts.length === 0) this.#onFirstVerdict?.(this.verdicts);
      this.verdicts.push((v = { rule: rule.name, action: rule.action, site, found: {} }));
    }
    v.found[label] = (v.found[label] ?? 0) + 1;
  }
}

interface Lane {
  scanner: StreamScanner;
  restorer: { push(piece: string): string; end(): string };
}

/** An original restored inside a JSON string (tool-call arguments): escaped as JSON would. */
const jsonInner = (original: string) => JSON.stringify(original).slice(1, -1);

const STRENGTH: Readonly<Record<GuardAction, number>> = { log: 0, redact: 1, block: 2 };

/** The rules' detectors, each once (a built-in detector is one object whatever the rules naming it). */
function detectorsOf(rules: readonly Rule[]): Detector[] {
  return [...new Set(rules.flatMap((r) => r.detectors))];
}

const article = (label: string) => (/^[AEIOU]/.test(label) ? 'an' : 'a');
