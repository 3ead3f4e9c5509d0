/**
 * An external guard over HTTP: the gateway POSTs the texts it is about to send (or answer) and
 * the guard answers allow, block, or redact with the spans to replace. Documented in the
 * README's Guardrails section; the shapes here are that contract.
 */

export interface WebhookOptions {
  url: string;
  /** Default 2000. */
  timeoutMs?: number;
  /** What a failed or late guard means: `allow` (fail open, the default) or `block` (fail closed). */
  onError?: 'allow' | 'block';
  headers?: Readonly<Record<string, string>>;
}

/** What the guard receives. */
export interface WebhookRequest {
  rule: string;
  site: 'request' | 'answer';
  requestId: string;
  key?: string;
  team?: string;
  model?: string;
  /** The texts, each with its place (`messages[2].content`, `choices[0].message.content`). */
  texts: { path: string; text: string }[];
}

/** What the guard answers. `findings` index into `texts`; offsets are UTF-16 code units, as JavaScript counts. */
export interface WebhookAnswer {
  verdict: 'allow' | 'block' | 'redact';
  findings?: { index: number; start: number; end: number; label?: string }[];
}

/** The most of a guard's answer read. */
const MAX_ANSWER_BYTES = 1 << 20;

/** Asks the guard; throws on a failure, a late answer or an answer that breaks the contract. */
export async function askWebhook(options: WebhookOptions, payload: WebhookRequest, signal?: AbortSignal): Promise<WebhookAnswer> {
  const timeout = AbortSignal.timeout(options.timeoutMs ?? 2000);
  const res = await fetch(options.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...options.headers },
    body: JSON.stringify(payload),
    signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
  });
  if (!res.ok) {
    await res.body?.cancel();
    throw new Error(`the guard answered HTTP ${res.status}`);
  }
  const declared = Number(res.headers.get('content-length'));
  if (declared > MAX_ANSWER_BYTES) {
    await res.body?.cancel();
    throw new Error('the guard answered more than 1 MiB');
  }
  const text = await res.text();
  if (text.length > MAX_ANSWER_BYTES) throw new Error('the guard answered more than 1 MiB');
  return readAnswer(JSON.parse(text), payload.texts);
}

function readAnswer(body: unknown, texts: readonly { text: string }[]): WebhookAnswer {
  const answer = body as Partial<WebhookAnswer> | null;
  if (!answer || (answer.verdict !== 'allow' && answer.verdict !== 'block' && answer.verdict !== 'redact')) throw new Error('the guard answered no verdict (allow, block or redact)');
  const findings = answer.findings ?? [];
  if (!Array.isArray(findings)) throw new Error('the guard answered findings that are not a list');
  for (const f of findings) {
    const text = texts[f?.index]?.text;
    if (text === undefined || !Number.isInteger(f.start) || !Number.isInteger(f.end) || f.start < 0 || f.end > text.length || f.start >= f.end)
      throw new Error('the guard answered a finding outside the texts it was sent');
    if (f.label !== undefined && !/^[A-Z][A-Z0-9_]{0,31}$/.test(f.label)) throw new Error('the guard answered a label that is not UPPER_SNAKE_CASE');
  }
  return { verdict: answer.verdict, findings };
}
