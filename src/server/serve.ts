/**
 * One handler for every way in: the client's body becomes its protocol's session, the same
 * pipeline runs it (keys, aliases, routing, retries, fallbacks, limits, cost, log line, metrics),
 * the one writer sends the answer or error in the client's protocol, and the exchange's end()
 * settles and reports it, whatever happened.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError, toGatewayError } from '../errors.ts';
import type { Protocol, ProtocolRequest } from '../ingress/protocol.ts';
import { Exchange, type ExchangeEnd } from '../pipeline/exchange.ts';
import { MAX_JSON_DEPTH, tooDeep } from '../protocol/depth.ts';
import { UpstreamError } from '../providers/upstream-error.ts';
import type { Runtime } from '../runtime/build.ts';
import type { AnswerTransform, GatewayResponse } from '../plugin-api.ts';
import type { ServerDeps } from './surface.ts';
import { writeAnswer, writeError } from './writer.ts';

export function servePipeline(deps: ServerDeps, protocol: Protocol) {
  const { getRuntime, log } = deps;
  // What ends a request and maps its errors, made once per config generation, not per request.
  let current: { runtime: Runtime; end: ExchangeEnd; toClientError: (err: unknown) => GatewayError } | undefined;
  const forRuntime = (runtime: Runtime) => (current?.runtime === runtime ? current : (current = { runtime, end: endOf(deps, runtime, true), toClientError: clientErrors(runtime) }));
  return async function pipeline(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    reply.hijack();
    const runtime = getRuntime();
    runtime.lifecycle.inFlight++;
    const x = startExchange(deps, runtime, protocol, request, reply);
    const { end, toClientError } = forRuntime(runtime);
    try {
      const deep = tooDeep(request.body);
      if (deep) throw new GatewayError('invalid_request', `Invalid '${deep}': JSON nested deeper than ${MAX_JSON_DEPTH} levels is not accepted.`, { param: deep });
      let parsed = protocol.parse(request.body, protocolRequest(request));
      if (protocol.prepare) parsed = await protocol.prepare(parsed, { id: x.id, headers: request.headers, key: () => runtime.identify?.(request.headers), responses: deps.responses });
      x.begin(protocol.begin(parsed, x));
      await runtime.run(x.ctx);
      const attempt = x.attempt;
      if (!attempt) throw new GatewayError('internal_error', 'the pipeline answered without an attempt');
      const response = await attempt.complete();
      await writeAnswer(x, x.answerTransforms ? await transformed(response, x.answerTransforms) : response, toClientError);
    } catch (err) {
      if (x.signal.aborted) {
        x.status = 499; // client closed the request (nginx's convention), for the log only
      } else {
        const error = toClientError(err);
        if (error.code === 'internal_error') log.error({ err, reqId: x.id }, 'unhandled error in the pipeline');
        writeError(x, error);
      }
    } finally {
      void x.end(end);
    }
  };
}

/**
 * The answer with the stages' transforms applied innermost first: the stage nearest the provider
 * registered last and sees the answer first, as on the way back through the onion (a cache
 * inside the guardrails keeps the answer before their restoring).
 */
async function transformed(response: GatewayResponse, transforms: readonly AnswerTransform[]): Promise<GatewayResponse> {
  let out = response;
  for (let i = transforms.length - 1; i >= 0; i--) {
    const t = transforms[i];
    if (out.kind === 'completion' && t.completion) out = { kind: 'completion', body: await t.completion(out.body) };
    else if (out.kind === 'stream' && t.stream) out = { kind: 'stream', chunks: t.stream(out.chunks) };
  }
  return out;
}

/**
 * A request refused before its handler ran (its body could not be read): answered in its
 * protocol and ended like any other, so that it has its log line and metrics.
 */
export function refuseUnread(deps: ServerDeps, protocol: Protocol, request: FastifyRequest, reply: FastifyReply, error: GatewayError): void {
  reply.hijack();
  const runtime = deps.getRuntime();
  const x = startExchange(deps, runtime, protocol, request, reply);
  writeError(x, error);
  void x.end(endOf(deps, runtime, false));
}

function startExchange(deps: ServerDeps, runtime: Runtime, protocol: Protocol, request: FastifyRequest, reply: FastifyReply): Exchange {
  const x = new Exchange({
    id: request.id,
    operation: protocol.operation,
    ingress: protocol.name,
    headers: request.headers,
    body: request.body,
    res: reply.raw,
    log: deps.log,
    services: runtime.services,
    errorAnswer: protocol.error,
  });
  deps.onRequestStart?.(x);
  deps.observer.requestStarted?.(x);
  return x;
}

/** The end of a request on `runtime`, in the exchange's one order. */
function endOf(deps: ServerDeps, runtime: Runtime, counted: boolean): ExchangeEnd {
  const limits = runtime.services.limits;
  return {
    released: (x) => {
      if (counted) runtime.lifecycle.inFlight--;
      deps.onRequestDone?.(runtime, x);
    },
    settle: limits && ((x) => limits.finish(x)),
    hooks: runtime.finish,
    // Bound once per config generation, not wrapped per request.
    observed: deps.observer.requestEnded?.bind(deps.observer),
  };
}

function protocolRequest(request: FastifyRequest): ProtocolRequest {
  const params = isRecord(request.params) && Object.values(request.params).every((v) => typeof v === 'string') ? (request.params as Record<string, string>) : {};
  return { params, query: isRecord(request.query) ? request.query : {}, headers: request.headers };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

/** What the client may see of a failure: upstream failures mapped, configured secrets scrubbed. */
function clientErrors(runtime: Runtime): (err: unknown) => GatewayError {
  return (err) => (err instanceof UpstreamError ? err.toClientError(runtime.redact) : toGatewayError(err).redacted(runtime.redact));
}
