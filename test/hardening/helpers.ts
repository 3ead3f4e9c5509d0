/**
 * What the hardening suites share and the testing kit does not offer: a finder for configured
 * secrets in every encoding a leak could take, raw HTTP over `net` (for requests no well-behaved
 * client would send), bounded concurrency, and a check of the OpenAI error envelope that reports
 * instead of throwing (a fuzzer collects every failure before it fails).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import net, { type AddressInfo } from 'node:net';

/** One way a secret can appear in text: the spec's list (raw, base64, base64url, URL-encoded, 12-character fragments). */
export interface SecretForm {
  encoding: string;
  text: string;
}

/** The shortest fragment of a secret that counts as a leak. */
export const FRAGMENT = 12;

/**
 * Every form of `secret` the audit looks for. Base64 is searched without its padding (a copy
 * inside a longer string has none). Fragments are the raw secret's substrings of FRAGMENT
 * characters; any longer copy contains one, so they also catch truncated echoes.
 */
export function secretForms(secret: string): SecretForm[] {
  const forms: SecretForm[] = [
    { encoding: 'raw', text: secret },
    { encoding: 'base64', text: Buffer.from(secret).toString('base64').replace(/=+$/, '') },
    { encoding: 'base64url', text: Buffer.from(secret).toString('base64url') },
    { encoding: 'url-encoded', text: encodeURIComponent(secret) },
  ];
  for (let i = 0; i + FRAGMENT <= secret.length; i++) forms.push({ encoding: `fragment[${i}..${i + FRAGMENT}]`, text: secret.slice(i, i + FRAGMENT) });
  // The same text twice (a secret without characters to escape) is reported once.
  const seen = new Set<string>();
  return forms.filter((f) => !seen.has(f.text) && seen.add(f.text));
}

export interface Leak {
  /** Which secret (its label, never the secret itself, so a failing test does not print it whole). */
  secret: string;
  encoding: string;
  /** Where the text came from: a response, a header, the log. */
  where: string;
  /** Up to 40 characters around the find, the find itself replaced by <…>. */
  around: string;
}

/** Every place in `corpus` where one of `secrets` (label → value) appears in one of its forms. */
export function findSecrets(corpus: Iterable<{ where: string; text: string }>, secrets: Record<string, string>): Leak[] {
  const forms = Object.entries(secrets).flatMap(([label, value]) => secretForms(value).map((f) => ({ label, ...f })));
  const leaks: Leak[] = [];
  for (const { where, text } of corpus) {
    for (const f of forms) {
      const at = text.indexOf(f.text);
      if (at < 0) continue;
      const around = `${text.slice(Math.max(0, at - 40), at)}<${f.encoding}>${text.slice(at + f.text.length, at + f.text.length + 40)}`;
      leaks.push({ secret: f.label, encoding: f.encoding, where, around });
    }
  }
  return leaks;
}

/** Why `body` is not the OpenAI error envelope {"error":{"message","type","param","code"}}, or undefined when it is. */
export function envelopeProblem(body: unknown): string | undefined {
  if (!body || typeof body !== 'object') return 'not a JSON object';
  const error = (body as { error?: unknown }).error;
  if (!error || typeof error !== 'object') return 'no error object';
  const e = error as Record<string, unknown>;
  if (typeof e.message !== 'string' || !e.message) return 'error.message is not a non-empty string';
  if (typeof e.type !== 'string' || !e.type) return 'error.type is not a non-empty string';
  if (!('param' in e) || (e.param !== null && typeof e.param !== 'string')) return 'error.param is not a string or null';
  if (typeof e.code !== 'string' || !e.code) return 'error.code is not a non-empty string';
  return undefined;
}

/** Runs `fn` over `items` with at most `limit` calls in flight; results in input order. */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i], i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

export interface ParsedResponse {
  status: number;
  statusLine: string;
  /** Lower-cased names; a repeated header keeps every value. */
  headers: Record<string, string[]>;
  body: string;
}

export interface RawExchange {
  /** Everything the server sent. */
  raw: Buffer;
  /** The server closed (or reset) the connection before `timeoutMs`. */
  closed: boolean;
  /** From connecting until the close (or the timeout). */
  elapsedMs: number;
  /** The first response in `raw`, when there is one. */
  response?: ParsedResponse;
  /** How many HTTP status lines `raw` holds (a smuggled second request would add one). */
  responses: number;
  /** A socket error seen (ECONNRESET after the answer is normal for a server that closes while we write). */
  error?: string;
}

/**
 * Sends bytes to 127.0.0.1:port over a fresh TCP connection and reads until the server closes it
 * or `timeoutMs` passes. `send` is the bytes, or a function writing them over time (a trickle);
 * it gets `closed()` to stop when the server has given up on it.
 */
export function rawExchange(port: number, send: string | Buffer | ((socket: net.Socket, closed: () => boolean) => Promise<void>), timeoutMs = 5000): Promise<RawExchange> {
  return new Promise((resolve) => {
    const started = performance.now();
    const socket = net.connect({ host: '127.0.0.1', port });
    const parts: Buffer[] = [];
    let error: string | undefined;
    let done = false;
    const finish = (closed: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      const raw = Buffer.concat(parts);
      resolve({ raw, closed, elapsedMs: performance.now() - started, response: parseResponse(raw), responses: countStatusLines(raw), error });
    };
    const timer = setTimeout(() => finish(false), timeoutMs);
    socket.on('data', (d: Buffer) => parts.push(d));
    socket.on('error', (err: NodeJS.ErrnoException) => {
      error = err.code ?? err.message;
    });
    socket.on('close', () => finish(true));
    socket.on('connect', () => {
      if (typeof send === 'function') {
        send(socket, () => done || socket.destroyed || socket.writableEnded).catch((err: Error) => {
          error ??= err.message;
        });
      } else {
        socket.write(send);
      }
    });
  });
}

/** Writes `bytes` one byte every `gapMs` until they are all out or the connection is gone. */
export function trickle(bytes: string | Buffer, gapMs: number) {
  const data = Buffer.from(bytes);
  return async (socket: net.Socket, closed: () => boolean) => {
    for (let i = 0; i < data.length && !closed(); i++) {
      socket.write(data.subarray(i, i + 1));
      await new Promise((r) => setTimeout(r, gapMs));
    }
  };
}

function countStatusLines(raw: Buffer): number {
  return raw.toString('latin1').match(/(^|\r\n)HTTP\/\d\.\d \d{3}/g)?.length ?? 0;
}

/** The first HTTP/1.x response in `raw` (body de-chunked), or undefined when none is complete enough to read. */
export function parseResponse(raw: Buffer): ParsedResponse | undefined {
  const text = raw.toString('latin1');
  const end = text.indexOf('\r\n\r\n');
  if (!text.startsWith('HTTP/') || end < 0) return undefined;
  const [statusLine, ...lines] = text.slice(0, end).split('\r\n');
  const headers: Record<string, string[]> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    (headers[name] ??= []).push(line.slice(colon + 1).trim());
  }
  let rest = raw.subarray(Buffer.byteLength(text.slice(0, end + 4), 'latin1'));
  let body: Buffer;
  if (headers['transfer-encoding']?.some((v) => /chunked/i.test(v))) {
    const out: Buffer[] = [];
    for (;;) {
      const lineEnd = rest.indexOf('\r\n');
      if (lineEnd < 0) break;
      const size = Number.parseInt(rest.subarray(0, lineEnd).toString('latin1'), 16);
      if (!Number.isFinite(size) || size === 0) break;
      out.push(rest.subarray(lineEnd + 2, lineEnd + 2 + size));
      rest = rest.subarray(lineEnd + 2 + size + 2);
    }
    body = Buffer.concat(out);
  } else if (headers['content-length']) {
    body = rest.subarray(0, Number(headers['content-length'][0]));
  } else {
    body = rest;
  }
  return { status: Number(statusLine.split(' ')[1]), statusLine, headers, body: body.toString('utf8') };
}

/** JSON.parse that answers undefined instead of throwing. */
export function tryJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** `depth` arrays nested in each other around `inner` (built iteratively: the test must not overflow its own stack). */
export function nestedArrays(depth: number, inner: unknown = 1): unknown {
  let value = inner;
  for (let i = 0; i < depth; i++) value = [value];
  return value;
}

/** `depth` objects nested under `key`. */
export function nestedObjects(depth: number, key = 'a', inner: unknown = 1): unknown {
  let value = inner;
  for (let i = 0; i < depth; i++) value = { [key]: value };
  return value;
}

/** JSON text of `depth` nested arrays, written directly (JSON.stringify recurses and would overflow at large depths). */
export function deepJsonText(depth: number, open = '[', close = ']', inner = '1'): string {
  return open.repeat(depth) + inner + close.repeat(depth);
}

// ---------------------------------------------------------------- secrets and a scripted upstream

/** The client key the hardening gateways accept. */
export const CLIENT_KEY = 'sk-client-KEY-fedcba9876543210';
/** The provider key of `providers.up` (the brief's example of a key an upstream might echo). */
export const UPSTREAM_SECRET = 'sk-upstream-SECRET-0123456789abcdef';
/** A provider key with characters that URL-encoding changes, so that form differs from the raw one. */
export const ODD_SECRET = 'pk+odd/KEY=0123456789&zyxwvu';

/** The forms an echoing upstream puts a received secret in (the ones the gateway must scrub). */
export function echoForms(secret: string): Record<string, string> {
  return {
    raw: secret,
    base64: Buffer.from(secret).toString('base64'),
    base64url: Buffer.from(secret).toString('base64url'),
    urlencoded: encodeURIComponent(secret),
    fragment: secret.slice(5, 5 + FRAGMENT),
  };
}

export interface UpstreamExchange {
  req: IncomingMessage;
  res: ServerResponse;
  /** The request body, parsed. */
  // biome-ignore lint/suspicious/noExplicitAny: whatever JSON the gateway sent; each behaviour reads the fields it scripts on
  body: any;
  /** The token of `Authorization: Bearer`, as the upstream received it. */
  bearer: string;
}

/** One misbehaviour, chosen by the `model` the gateway sends (the target's model name). */
export type Behaviour = (x: UpstreamExchange) => unknown;

export interface ScriptedUpstream {
  url: string;
  /** Models asked for, in order. */
  hits: string[];
  close(): Promise<void>;
}

/**
 * An OpenAI-compatible upstream on 127.0.0.1 that does whatever the behaviour named by the
 * request's model does with the raw response: the kit's fake upstream answers from a script,
 * these need the socket (endless bodies, bytes split mid-character, backpressure).
 */
export async function startScriptedUpstream(behaviours: Record<string, Behaviour>): Promise<ScriptedUpstream> {
  const hits: string[] = [];
  const server = createServer(async (req, res) => {
    const parts: Buffer[] = [];
    for await (const part of req) parts.push(part as Buffer);
    const body = tryJson(Buffer.concat(parts).toString('utf8')) as { model?: string } | undefined;
    const model = String(body?.model ?? '');
    hits.push(model);
    const bearer = String(req.headers.authorization ?? '').replace(/^Bearer /, '');
    const behaviour = behaviours[model];
    if (!behaviour) {
      res.writeHead(418, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: `no behaviour for ${model}`, type: 'test', param: null, code: null } }));
      return;
    }
    try {
      await behaviour({ req, res, body, bearer });
    } catch {
      // The gateway went away mid-answer (a timeout or a limit it enforced): that is the point.
      res.destroy();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Writes `data` respecting backpressure; rejects when the peer has gone. */
export async function writeAll(res: ServerResponse, data: string | Buffer): Promise<void> {
  if (res.destroyed) throw new Error('peer gone');
  if (!res.write(data)) {
    await new Promise<void>((resolve, reject) => {
      const done = () => {
        res.off('drain', done);
        res.off('close', gone);
        resolve();
      };
      const gone = () => {
        res.off('drain', done);
        reject(new Error('peer gone'));
      };
      res.on('drain', done);
      res.on('close', gone);
    });
  }
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** An OpenAI chat.completion.chunk carrying `content`. */
export function chunk(content: string, finish: string | null = null): string {
  return `data: ${JSON.stringify({ id: 'chatcmpl-h', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { role: 'assistant', content }, finish_reason: finish }] })}\n\n`;
}

/** An OpenAI chat.completion carrying `content`. */
export function completion(content: string): Record<string, unknown> {
  return {
    id: 'chatcmpl-h',
    object: 'chat.completion',
    created: 1,
    model: 'm',
    choices: [{ index: 0, message: { role: 'assistant', content, refusal: null }, logprobs: null, finish_reason: 'stop' }],
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  };
}

export interface ClientAnswer {
  status: number;
  headers: Record<string, string>;
  /** The body as bytes, for UTF-8 checks. */
  bytes: Buffer;
  text: string;
  /** The parsed body (JSON answers). */
  // biome-ignore lint/suspicious/noExplicitAny: any JSON answer, success or error envelope; the assertions read its fields
  json: any;
  /** `data:` payloads of an SSE answer, in order (`[DONE]` included as text). */
  events: string[];
}

/** POSTs a chat request with the client key and reads the whole answer. */
export async function postChat(baseUrl: string, body: Record<string, unknown>, init: { key?: string; headers?: Record<string, string>; signal?: AbortSignal } = {}): Promise<ClientAnswer> {
  const res = await fetch(`${baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${init.key ?? CLIENT_KEY}`, 'content-type': 'application/json', ...init.headers },
    body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }], ...body }),
    signal: init.signal ?? AbortSignal.timeout(15_000),
  });
  const bytes = Buffer.from(await res.arrayBuffer());
  const text = bytes.toString('utf8');
  const headers = Object.fromEntries(res.headers.entries());
  const events = (headers['content-type'] ?? '').startsWith('text/event-stream')
    ? text
        .split('\n\n')
        .map((e) => e.trim())
        .filter((e) => e.startsWith('data: '))
        .map((e) => e.slice(6))
    : [];
  return { status: res.status, headers, bytes, text, json: tryJson(text), events };
}

/** The text an answer exposes (status line aside): every header and the body. */
export function exposedText(a: ClientAnswer): string {
  return `${Object.entries(a.headers)
    .map(([k, v]) => `${k}: ${v}`)
    .join('\n')}\n\n${a.text}`;
}
