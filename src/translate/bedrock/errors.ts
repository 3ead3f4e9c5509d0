/**
 * Bedrock Runtime errors (AWS restJson1): the body is `{"message"}` (sometimes `"Message"`, or a
 * `__type`), and the exception's name travels in the `x-amzn-errortype` header, e.g.
 * `ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/`. In a ConverseStream
 * the same exceptions arrive as `:message-type: exception` frames named in lower camel case
 * (`throttlingException`). The name decides the status: a few Bedrock statuses say the wrong
 * thing to an OpenAI client (ModelErrorException is a 424, a quota error a 400).
 */
import type { UpstreamFailure } from '../../plugin-api.ts';
import type { Headers } from '../../providers/http-body.ts';

/** Exception name (lower-cased) → the status the gateway treats it as. */
const STATUS: Record<string, number> = {
  validationexception: 400,
  serializationexception: 400,
  unrecognizedclientexception: 401,
  missingauthenticationtokenexception: 401,
  accessdeniedexception: 403,
  invalidsignatureexception: 403,
  incompletesignatureexception: 403,
  expiredtokenexception: 403,
  resourcenotfoundexception: 404,
  modeltimeoutexception: 408,
  conflictexception: 409,
  throttlingexception: 429,
  servicequotaexceededexception: 429,
  internalserverexception: 500,
  internalservererror: 500,
  internalfailure: 500,
  modelerrorexception: 500,
  modelstreamerrorexception: 500,
  servicenotreadyexception: 503,
  modelnotreadyexception: 503,
  serviceunavailableexception: 503,
};

/**
 * The bare exception name: `ValidationException:http://...` → `ValidationException`,
 * `com.amazonaws.bedrock#ThrottlingException` → `ThrottlingException`.
 */
export function exceptionName(raw: unknown): string | undefined {
  if (typeof raw !== 'string' || !raw.trim()) return undefined;
  let name = raw.trim();
  const colon = name.indexOf(':');
  if (colon > 0) name = name.slice(0, colon);
  const hash = name.lastIndexOf('#');
  if (hash >= 0) name = name.slice(hash + 1);
  return name || undefined;
}

/** The status for an exception name, or undefined when the name is unknown. */
export function statusOf(name: string | undefined): number | undefined {
  return name ? STATUS[name.toLowerCase()] : undefined;
}

function messageOf(body: unknown): string | undefined {
  if (body && typeof body === 'object') {
    const b = body as Record<string, unknown>;
    for (const key of ['message', 'Message', 'errorMessage']) {
      if (typeof b[key] === 'string' && b[key]) return b[key] as string;
    }
    return undefined;
  }
  if (typeof body === 'string' && body.trim()) return body.trim().slice(0, 500);
  return undefined;
}

function header(headers: Headers, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** An HTTP error answer in Bedrock's words. */
export function readBedrockError(status: number, body: unknown, headers: Headers): UpstreamFailure {
  const type = exceptionName(header(headers, 'x-amzn-errortype')) ?? exceptionName((body as { __type?: unknown } | undefined)?.__type);
  const failure: UpstreamFailure = { message: messageOf(body) ?? type ?? `HTTP ${status}`, code: type ?? null };
  let mapped = statusOf(type);
  // A model id Bedrock does not know is the gateway's configuration, not the client's request.
  if (status === 400 && /model identifier is invalid/i.test(failure.message)) mapped = 404;
  if (mapped !== undefined && mapped !== status) failure.status = mapped;
  return failure;
}

/** An in-stream exception frame (`:exception-type` names it, the payload holds the message). */
export function streamFailure(type: string, payload: unknown): { status: number; failure: UpstreamFailure } {
  const failure: UpstreamFailure = { message: messageOf(payload) ?? type, code: type };
  const original = (payload as { originalStatusCode?: unknown } | undefined)?.originalStatusCode;
  let status = statusOf(type) ?? 500;
  // A model stream error may say what the model itself answered; a 429 there is a throttle.
  if (type.toLowerCase() === 'modelstreamerrorexception' && original === 429) status = 429;
  return { status, failure };
}
