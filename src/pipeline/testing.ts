/**
 * Test helpers for the unit tests of the pipeline's core and the built-in stages (the *.test.ts
 * in src/pipeline and src/stages): a real Exchange on an unconnected ServerResponse, a protocol
 * session, a scripted provider instance, route targets with a real TargetState, and a runtime
 * view. No vitest here: spies are made in the tests that assert on them.
 */
import { modelResolver } from '../runtime/routes.ts';
import { IncomingMessage, ServerResponse, type IncomingHttpHeaders } from 'node:http';
import { Socket } from 'node:net';
import pino, { type Logger } from 'pino';
import type { ChatCompletion, ChatCompletionChunk, ChatCompletionRequest, EmbeddingRequest } from '../openai-types.ts';
import type {
  Clock,
  Drop,
  Ingress,
  KeyIdentity,
  ModelRoute,
  NativeRequest,
  NativeResponse,
  Operation,
  ProviderCall,
  ProviderInstance,
  RouteTarget,
  RuntimeView,
  StageEnv,
  Timeouts,
} from '../plugin-api.ts';
import { DEFAULT_RETRY } from '../routing/policy.ts';
import { TargetState } from '../routing/target-state.ts';
import { Exchange, type GenerationServices, type ProtocolSession } from './exchange.ts';

/** A real logger that writes nothing (spy on it with vi.spyOn to assert what is logged). */
export function silentLog(): Logger {
  return pino({ level: 'silent' });
}

/** A one-message chat request for the alias `alias`. */
export function chatBody(extra: Partial<ChatCompletionRequest> = {}): ChatCompletionRequest {
  return { model: 'alias', messages: [{ role: 'user', content: 'hello there' }], ...extra };
}

/** The parts of a protocol session the core reads; answers are the gateway's own bodies. */
export function sessionOf(body: ChatCompletionRequest | EmbeddingRequest, extra: { native?: NativeRequest; estimate?: number; drops?: readonly Drop[] } = {}): ProtocolSession {
  return { body, native: extra.native, estimate: extra.estimate, drops: extra.drops, answer: (response) => response.body };
}

export interface ExchangeOptions {
  operation?: Operation;
  ingress?: Ingress;
  /** The client's body as it came; the session's body when a session is given. */
  body?: unknown;
  headers?: IncomingHttpHeaders;
  services?: Partial<GenerationServices>;
  log?: Logger;
  /** Begun at once when given. */
  session?: ProtocolSession;
}

/** A real Exchange on a real (unconnected) response: `x.res.emit('close')` is the client leaving. */
export function exchangeFor(options: ExchangeOptions = {}): Exchange {
  const res = new ServerResponse(new IncomingMessage(new Socket()));
  const services: GenerationServices = { redact: (t) => t, upstreamBodyLimit: 1 << 20, ...options.services };
  const x = new Exchange({
    id: 'req_test',
    services,
    errorAnswer: (error) => ({ status: error.status, body: error.toJSON() }),
    operation: options.operation ?? 'chat',
    ingress: options.ingress ?? 'chat',
    headers: options.headers ?? {},
    body: 'body' in options ? options.body : (options.session?.body ?? chatBody()),
    res,
    log: options.log ?? silentLog(),
  });
  if (options.session) x.begin(options.session);
  return x;
}

/** An OpenAI completion as a provider's toCompletion would make it. */
export function completionOf(text: string, model = 'acme-1'): ChatCompletion {
  return {
    id: 'cmpl_1',
    object: 'chat.completion',
    created: 1_700_000_000,
    model,
    choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 },
  };
}

/** One content chunk. */
export function chunkOf(text: string, model = 'acme-1'): ChatCompletionChunk {
  return { id: 'cmpl_1', object: 'chat.completion.chunk', created: 1_700_000_000, model, choices: [{ index: 0, delta: { content: text }, finish_reason: null }] };
}

function isChunk(event: unknown): event is ChatCompletionChunk {
  return typeof event === 'object' && event !== null && 'object' in event && event.object === 'chat.completion.chunk';
}

function isCompletion(body: unknown): body is ChatCompletion {
  return typeof body === 'object' && body !== null && 'object' in body && body.object === 'chat.completion';
}

/** A provider instance whose `send` is scripted by the test; every call is kept. */
export interface FakeProvider extends ProviderInstance {
  readonly calls: ProviderCall[];
}

/**
 * A provider that speaks OpenAI natively: its JSON answers are completions, its stream events
 * are chunks (anything else in a stream is an error event, thrown as the provider would).
 */
export function fakeProvider(send: (call: ProviderCall) => Promise<NativeResponse>, extra: Pick<ProviderInstance, 'embed'> = {}): FakeProvider {
  const calls: ProviderCall[] = [];
  return {
    calls,
    send(call) {
      calls.push(call);
      return send(call);
    },
    toCompletion(body) {
      if (!isCompletion(body)) throw new Error('not a completion');
      return body;
    },
    createStreamTranslator() {
      return {
        push(event) {
          if (!isChunk(event)) throw new Error(`not a chunk: ${JSON.stringify(event)}`);
          return event;
        },
      };
    },
    ...extra,
  };
}

/** A provider answering every call with this completion. */
export function answering(text: string): FakeProvider {
  return fakeProvider(async () => ({ kind: 'json', body: completionOf(text), headers: {} }));
}

/** Resolves after `ms` (global timers, so vitest's fake timers drive it); rejects with the signal's reason when it aborts. */
export function sleepFor(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Native stream events, each after its delay, as an HTTP provider would read them: abortable by the call's signal. */
export async function* timedEvents(signal: AbortSignal, script: ReadonlyArray<{ afterMs: number; event: unknown }>): AsyncGenerator<unknown> {
  for (const step of script) {
    await sleepFor(step.afterMs, signal);
    yield step.event;
  }
}

export const TIMEOUTS: Timeouts = { connectMs: 1000, firstByteMs: 1000, idleMs: 500, totalMs: 1000 };

/** A target of provider `acme` with a real TargetState (no cooldown unless given). */
export function targetOf(instance: ProviderInstance, extra: Partial<Omit<RouteTarget, 'instance'>> = {}): RouteTarget {
  return {
    provider: 'acme',
    model: 'acme-1',
    dropUnsupportedParams: false,
    instance,
    capabilities: {},
    weight: 1,
    retry: DEFAULT_RETRY,
    timeouts: TIMEOUTS,
    state: new TargetState(undefined),
    ...extra,
  };
}

export function routeOf(name: string, targets: readonly RouteTarget[], extra: Partial<Omit<ModelRoute, 'name' | 'targets'>> = {}): ModelRoute {
  return { name, strategy: 'fallback', retry: DEFAULT_RETRY, targets, fallbacks: {}, ...extra };
}

/** A key allowed the models its globs name exactly (`*` for all). */
export function keyOf(name: string, extra: { team?: string; expiresAt?: number; models?: readonly string[] } = {}): KeyIdentity {
  const models = extra.models ?? ['*'];
  return { name, team: extra.team, expiresAt: extra.expiresAt, allows: (model) => models.includes('*') || models.includes(model) };
}

/** A runtime view over these routes and keys (token → key). */
export function runtimeOf(models: readonly ModelRoute[], keys: Readonly<Record<string, KeyIdentity>> = {}, redact: (text: string) => string = (t) => t): RuntimeView {
  const index = new Map(Object.entries(keys));
  const byName = new Map(models.map((m) => [m.name, m]));
  return {
    generation: 1,
    models: byName,
    resolveModel: modelResolver(byName),
    findKey: (token) => index.get(token),
    hasKeys: index.size > 0,
    redact,
    upstreamBodyLimit: 1 << 20,
  };
}

/** What a stage's create() gets: a silent logger, this runtime, and a clock (a FakeClock in tests). */
export function stageEnv(runtime: RuntimeView, clock: Clock, log: Logger = silentLog()): StageEnv {
  return { log, configDir: '.', clock, runtime };
}
