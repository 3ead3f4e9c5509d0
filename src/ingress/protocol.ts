/**
 * A way in: one client protocol (OpenAI chat, Responses, Anthropic Messages, embeddings...) as
 * data. Each lives in its own folder under src/ingress/ and is listed once in protocols.ts; the
 * server registers its paths, and every request in it runs the same pipeline:
 *
 *   parse(body) → prepare(request)? → begin(request) → the pipeline runs session.body → session.answer / session.events
 *
 * Errors (before or after the session exists) take the protocol's envelope from `error`.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { GatewayError } from '../errors.ts';
import type { ErrorAnswer, ProtocolSession } from '../pipeline/exchange.ts';
import type { ChatCompletionRequest } from '../openai-types.ts';
import type { Ingress, KeyIdentity, Operation } from '../plugin-api.ts';
import type { ResponseStore } from '../responses-store/index.ts';

/** What a protocol may read of the HTTP request besides its body (a model or a method named in the URL). */
export interface ProtocolRequest {
  /** The path's parameters (`:name` segments of `paths`). */
  readonly params: Readonly<Record<string, string>>;
  readonly query: Readonly<Record<string, unknown>>;
  readonly headers: IncomingHttpHeaders;
}

/** What a protocol may use to resolve, before the pipeline, what a request names on the gateway's side. */
export interface PrepareContext {
  readonly id: string;
  readonly headers: IncomingHttpHeaders;
  /** The caller's key, as the auth stage will read it (undefined without keys); throws its 401. */
  key(): KeyIdentity | undefined;
  /** Stored Responses; undefined when the gateway keeps none. */
  readonly responses: ResponseStore | undefined;
}

export interface Protocol<Request = unknown> {
  readonly name: Ingress;
  readonly operation: Operation;
  /** The POST paths it answers, in fastify's syntax (`:name` is a parameter), e.g. ['/v1/chat/completions', '/chat/completions']. */
  readonly paths: readonly string[];
  /** The client's JSON body → the protocol's request; throws a GatewayError (400) naming what is wrong. */
  parse(body: unknown, request: ProtocolRequest): Request;
  /** The parsed request made self-contained before the pipeline runs it (stored Responses' chains and references). */
  prepare?(request: Request, context: PrepareContext): Promise<Request>;
  /** One request's session: what the pipeline runs and how its answer goes back. */
  begin(request: Request, info: { readonly id: string; readonly headers: IncomingHttpHeaders }): ProtocolSession;
  /** An error in the protocol's envelope. */
  error(error: GatewayError, requestId: string): ErrorAnswer;
}

/** OpenAI's error envelope (chat, Responses, embeddings). */
export function openAiError(error: GatewayError): ErrorAnswer {
  return { status: error.status, body: error.toJSON() };
}

/** Typed protocols as one list (each keeps its own request type inside). */
export function defineProtocol<Request>(protocol: Protocol<Request>): Protocol {
  // begin() is a method (bivariant in its parameter): each protocol's request type is checked where it is written.
  return protocol;
}

/**
 * A JSON object, taken for a request of the pipeline's model. Only its being an object is checked
 * here: its fields are the `validate` stage's (so that a pipeline may relax or replace it).
 */
export function isRequestObject(value: unknown): value is ChatCompletionRequest {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
