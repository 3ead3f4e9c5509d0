/**
 * What a request's guardrail rules do: its text checked and redacted before it goes up, the
 * answer's transforms (checked as it flows, placeholders restored), webhooks asked. Verdicts
 * name the rule, the action, where and what kind of thing matched: never the matched text.
 */
import { GatewayError } from '../errors.ts';
import type { ChatCompletion, ChatCompletionChunk, ChatCompletionRequest, EmbeddingRequest } from '../openai-types.ts';
import type { AnswerTransform } from '../plugin-api.ts';
import { scan, type Detector, type Finding } from './detect/index.ts';
import type { GuardAction, GuardSite, Rule } from './policy.ts';
import { StreamScanner } from './stream-scan.ts';
import { editRequestTexts } from './texts.ts';
import { Vault } from './vault.ts';
import { askJudge } from './judge.ts';
import { askWebhook, type WebhookAnswer } from './webhook.ts';

/** One decision, for the log line, metrics and the console. */
export interface Verdict {
  rule: string;
  action: GuardAction;
  site: GuardSite;
  /** The kinds found (`EMAIL`, `API_KEY`; `GUARD_UNAVAILABLE` when a webhook failed), with how many. */
  found: Record<string, number>;
}

/** Who and what the request is, for webhooks. */
export interface RequestMeta {
  requestId: string;
  key?: string;
  team?: string;
  model?: string;
  signal?: AbortSignal;
  /** The gateway's own URL and the mark of its judges' requests (for judge rules). */
  selfUrl?: string;
  judgeMark?: string;
  /** Where a guard's failure is told (never to the client when the rule fails open). */
  log?: (rule: string, err: unknown) => void;
}

type Texts = { path: string; text: string }[];

export class GuardedRequest {
  readonly verdicts: Verdict[] = [];
  readonly vault = new Vault();
  readonly #rules: readonly Rule[];
  readonly #meta: RequestMeta;
  readonly #onFirstVerdict: ((verdicts: readonly Verdict[]) => void) | undefined;

  /** `onFirstVerdict` gets the (growing) list of verdicts once, when there is a first one. */
  constructor(rules: readonly Rule[], meta: RequestMeta, onFirstVerdict?: (verdicts: readonly Verdict[]) => void) {
    this.#rules = rules;
    this.#meta = meta;
    this.#onFirstVerdict = onFirstVerdict;
  }

  /** Checks and redacts the request's text in place (copies what it changes); throws the block. */
  async checkRequest(body: ChatCompletionRequest | EmbeddingRequest): Promise<void> {
    const rules = this.#rules.filter((r) => r.request);
    if (rules.length === 0) return;
    const local = rules.filter((r) => r.detectors.length);
    if (local.length) editRequestTexts(body, (text, path) => this.#check(text, local, 'request', path));
    // Webhooks after the detectors: an outside guard never sees what a rule redacted.
    for (const rule of rules) {
      if (!rule.webhook && !rule.judge) continue;
      const texts: Texts = [];
      editRequestTexts(body, (text, path) => {
        texts.push({ path, text });
        return text;
      });
      const out = await this.#askGuard(rule, 'request', texts);
      if (!out) continue;
      let i = 0;
      editRequestTexts(body, () => out[i++]);
    }
  }

  /** The transform of the answer, when a rule looks at it or originals are to be restored. */
  answerTransform(): AnswerTransform | undefined {
    const rules = this.#rules.filter((r) => r.answer);
    const restoring = this.#rules.some((r) => r.restore);
    if (rules.length === 0 && !restoring) return undefined;
    const local = rules.filter((r) => r.detectors.length);
    const guards = rules.filter((r) => r.webhook || r.judge);
    return {
      completion: (body) => this.#completion(body, local, guards),
      stream: (chunks) => this.#stream(chunks, local, guards),
    };
  }

  async #completion(body: ChatCompletion, local: readonly Rule[], guards: readonly Rule[]): Promise<ChatCompletion> {
    // The model's own text is checked (detectors, then guards) before the originals go back in.
    let choices = body.choices.map((choice, i) => {
      const message = { ...choice.message };
      if (typeof message.content === 'string') message.content = this.#check(message.content, local, 'answer', `choices[${i}].message.content`);
      if (message.tool_calls) {
        message.tool_calls = message.tool_calls.map((c, j) =>
          c.type === 'function' ? { ...c, function: { ...c.function, arguments: this.#check(c.function.arguments, local, 'answer', `choices[${i}].message.tool_calls[${j}]`) } } : c,
        );
      }
      return { ...choice, message };
    });
    for (const rule of guards) {
      const texts: Texts = [];
      choices.forEach((c, i) => {
        if (typeof c.message.content === 'string') texts.push({ path: `choices[${i}].message.content`, text: c.message.content });
        c.message.tool_calls?.forEach((t, j) => {
          if (t.type === 'function') texts.push({ path: `choices[${i}].message.tool_calls[${j}]`, text: t.function.arguments });
        });
      });
      const out = await this.#askGuard(rule, 'answer', texts);
      if (!out) continue;
      let k = 0;
      choices = choices.map((c) => {
        const message = { ...c.message };
        if (typeof message.content === 'string') message.content = out[k++];
        if (message.tool_calls) message.tool_calls = message.tool_calls.map((t) => (t.type === 'function' ? { ...t, function: { ...t.function, arguments: out[k++] } } : t));
        return { ...c, message };
      });
    }
    choices = choices.map((c) => {
      const message = { ...c.message };
      if (typeof message.content === 'string') message.content = this.vault.restore(message.content);
      if (message.tool_calls)
        message.tool_calls = message.tool_calls.map((t) => (t.type === 'function' ? { ...t, function: { ...t.function, arguments: this.vault.restore(t.function.arguments, jsonInner) } } : t));
      return { ...c, message };
    });
    return { ...body, choices };
  }

  async *#stream(chunks: AsyncIterable<ChatCompletionChunk>, local: readonly Rule[], guards: readonly Rule[]): AsyncIterable<ChatCompletionChunk> {
    const detectors = detectorsOf(local);
    // One scanner and restorer per choice's text and per tool call's arguments.
    const lanes = new Map<string, Lane>();
    const lane = (id: string, json: boolean): Lane => {
      let l = lanes.get(id);
      if (!l) lanes.set(id, (l = { scanner: new StreamScanner(detectors), restorer: this.vault.restorer(json ? jsonInner : undefined), seen: '' }));
      return l;
    };
    const pass = (l: Lane, text: string, final: boolean, where: string): string => {
      const released = final ? l.scanner.end() : l.scanner.push(text);
      const checked = this.#apply(released.text, released.findings, local, 'answer', where);
      // What the guards read at the finish: the model's text as checked, before restoring.
      if (guards.length) l.seen += checked;
      return l.restorer.push(checked) + (final ? l.restorer.end() : '');
    };
    let last: ChatCompletionChunk | undefined;
    for await (const chunk of chunks) {
      last = chunk;
      if (chunk.choices.length === 0) {
        yield chunk;
        continue;
      }
      const choices = [];
      for (const choice of chunk.choices) {
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
          const mine = [...lanes.entries()].filter(([id]) => id === `c${choice.index}` || id.startsWith(`t${choice.index}.`));
          for (const [id, l] of mine) {
            if (id.startsWith('t')) {
              const rest = pass(l, '', true, `choices[${choice.index}].delta.tool_calls`);
              if (rest) (delta.tool_calls ??= []).push({ index: Number(id.split('.')[1]), function: { arguments: rest } });
            }
            lanes.delete(id);
          }
          // The guards read the whole answer before its finish goes out: they can still end it.
          if (guards.length) await this.#guardStream(guards, choice.index, mine);
        }
        choices.push({ ...choice, delta });
      }
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

  /** A streamed choice's guards, at its finish: a block ends the stream; text already sent cannot be redacted (counted only). */
  async #guardStream(guards: readonly Rule[], index: number, lanes: readonly [string, Lane][]): Promise<void> {
    const texts: Texts = lanes.map(([id, l]) => ({ path: id.startsWith('c') ? `choices[${index}].delta.content` : `choices[${index}].delta.tool_calls[${id.split('.')[1]}]`, text: l.seen }));
    for (const rule of guards) await this.#askGuard(rule, 'answer', texts, true);
  }

  /**
   * Asks a rule's webhook about `texts`: the texts to use instead when it redacted, undefined
   * when it allowed (or failed open). Throws the block (and a failure, when the rule fails closed).
   */
  async #askGuard(rule: Rule, site: GuardSite, texts: Texts, streamed = false): Promise<string[] | undefined> {
    const guard = rule.webhook ?? rule.judge;
    if (!guard || texts.length === 0) return undefined;
    const meta = this.#meta;
    let answer: WebhookAnswer;
    try {
      answer = rule.webhook
        ? await askWebhook(rule.webhook, { rule: rule.name, site, requestId: meta.requestId, key: meta.key, team: meta.team, model: meta.model, texts }, meta.signal)
        : await askJudge(rule.judge as NonNullable<Rule['judge']>, texts, { selfUrl: meta.selfUrl, mark: meta.judgeMark ?? '', signal: meta.signal });
    } catch (err) {
      const closed = guard.onError === 'block';
      this.#record(rule, site, 'GUARD_UNAVAILABLE', closed ? 'block' : 'log');
      if (this.#meta.signal?.aborted) throw err;
      if (closed)
        throw new GatewayError(
          'guardrail_unavailable',
          `Guardrail "${rule.name}" could not check the ${site} (${(err as Error)?.name === 'TimeoutError' ? 'its guard did not answer in time' : 'its guard failed'}), and it fails closed.`,
          { headers: { 'retry-after': '1' } },
        );
      return undefined;
    }
    if (answer.verdict === 'allow') return undefined;
    const findings = answer.findings ?? [];
    const kind = rule.judge ? 'JUDGE' : 'WEBHOOK';
    if (findings.length === 0) this.#record(rule, site, kind, answer.verdict);
    for (const f of findings) this.#record(rule, site, f.label ?? kind, answer.verdict);
    if (answer.verdict === 'block') {
      const first = findings[0];
      const where = first ? texts[first.index].path : texts[0].path;
      throw new GatewayError('content_policy_violation', `Blocked by guardrail "${rule.name}": its ${rule.judge ? 'judge' : 'guard'} refused the ${site} (${where}).`, {
        param: site === 'request' ? where : undefined,
      });
    }
    // Redact: what a stream already sent cannot be taken back; it was counted above.
    if (streamed) return undefined;
    return texts.map((t, i) => {
      const spans: Finding[] = findings
        .filter((f) => f.index === i)
        .sort((a, b) => a.start - b.start)
        .filter((f, k, all) => k === 0 || f.start >= all[k - 1].end)
        .map((f) => ({ start: f.start, end: f.end, label: f.label ?? 'REDACTED', detector: `webhook:${rule.name}` }));
      return this.vault.redact(t.text, spans);
    });
  }

  #check(text: string, rules: readonly Rule[], site: GuardSite, where: string): string {
    if (rules.length === 0) return text;
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
        this.#record(r, site, f.label, r.action);
        if (!rule || STRENGTH[r.action] > STRENGTH[rule.action]) rule = r;
      }
      if (!rule) continue;
      if (rule.action === 'block') {
        throw new GatewayError('content_policy_violation', `Blocked by guardrail "${rule.name}": the ${site} contains ${article(f.label)} ${f.label.toLowerCase().replace(/_/g, ' ')} (${where}).`, {
          param: site === 'request' ? where : undefined,
        });
      }
      if (rule.action === 'redact') redact.push(f);
    }
    return this.vault.redact(text, redact);
  }

  #record(rule: Rule, site: GuardSite, label: string, action: GuardAction): void {
    let v = this.verdicts.find((x) => x.rule === rule.name && x.site === site && x.action === action);
    if (!v) {
      if (this.verdicts.length === 0) this.#onFirstVerdict?.(this.verdicts);
      this.verdicts.push((v = { rule: rule.name, action, site, found: {} }));
    }
    v.found[label] = (v.found[label] ?? 0) + 1;
  }
}

interface Lane {
  scanner: StreamScanner;
  restorer: { push(piece: string): string; end(): string };
  /** The lane's checked text so far, for the guards (kept only when there are some). */
  seen: string;
}

/** An original restored inside a JSON string (tool-call arguments): escaped as JSON would. */
const jsonInner = (original: string) => JSON.stringify(original).slice(1, -1);

const STRENGTH: Readonly<Record<GuardAction, number>> = { log: 0, redact: 1, block: 2 };

/** The rules' detectors, each once (a built-in detector is one object whatever the rules naming it). */
function detectorsOf(rules: readonly Rule[]): Detector[] {
  return [...new Set(rules.flatMap((r) => r.detectors))];
}

const article = (label: string) => (/^[AEIOU]/.test(label) ? 'an' : 'a');
