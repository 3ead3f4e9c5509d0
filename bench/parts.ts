/**
 * The parts of a gateway request, for bench/breakdown.ts: each is the functions of its modules
 * (names as callgrind and Node's perf map give them: "name src/dir/file.js:line", the compiled
 * dist/ shown as src/). A part's cost is its own code and the library and runtime work it calls
 * (see partCosts); garbage collection and the JIT compiler, on whichever thread, are parts of
 * their own. What no part reaches (Node's HTTP server, the event loop) is the remainder.
 */
import type { Profile } from './callgrind.ts';

export interface Part {
  name: string;
  match: (fn: string) => boolean;
}

const inFiles =
  (...patterns: RegExp[]) =>
  (fn: string): boolean => {
    const file = fn.slice(fn.lastIndexOf(' ') + 1);
    return patterns.some((p) => p.test(file));
  };

const GC = /^(v8::internal::|heap::base::|cppgc::).*(Scavenge|Marking|Sweep|MarkCompact|Heap::CollectGarbage|Evacuat|ConcurrentMarking|MinorMS|GCTracer|IterateAndScavenge|LargeObjectSpace)/;
const JIT = /^(v8::internal::(compiler|maglev|baseline)::|v8::internal::Compiler::|v8::internal::OptimizingCompileDispatcher)/;

export const PARTS: Part[] = [
  { name: 'garbage collection (any thread)', match: (fn) => GC.test(fn) },
  { name: 'JIT compilation (any thread)', match: (fn) => JIT.test(fn) },
  {
    name: 'parse (body read, JSON, depth, protocol)',
    match: inFiles(/^node_modules\/fastify\/lib\/content-?[tT]ype-?[pP]arser/, /^src\/protocol\/depth\./, /^src\/ingress\//, /^node_modules\/secure-json-parse\//),
  },
  { name: 'auth', match: inFiles(/^src\/stages\/auth\./) },
  { name: 'validation', match: (fn) => inFiles(/^src\/stages\/validate\./)(fn) || /^validate\d*\b/.test(fn) },
  { name: 'routing', match: inFiles(/^src\/stages\/route\./, /^src\/routing\//) },
  { name: 'governance', match: inFiles(/^src\/pipeline\/governor\./, /^src\/governance\//) },
  {
    name: 'the attempt (retry, attempt, transform-response)',
    match: inFiles(/^src\/stages\/retry\./, /^src\/pipeline\/(attempt|translated-stream)\./, /^src\/stages\/transform-response\./, /^src\/protocol\/(normalize|prime|chunks)\./),
  },
  { name: 'upstream client (provider, undici)', match: inFiles(/^src\/providers\//, /^src\/translate\//, /^node_modules\/undici\//, /^plugins\//) },
  { name: 'response serialisation (writer, SSE)', match: inFiles(/^src\/server\/(writer|sse-writer)\./, /^src\/protocol\/sse\./, /^src\/observability\/timing\./) },
  { name: 'log line (stage, pino)', match: inFiles(/^src\/stages\/log\./, /^node_modules\/(pino|sonic-boom|fast-redact|@pinojs)/, /^src\/(logger|log-writer)\./) },
  {
    name: 'metrics (observer, prom-client)',
    match: inFiles(/^src\/observability\/(metrics|labels|label-sets|counter-buffer|series-histogram|identity-metrics|state-gauges)\./, /^node_modules\/prom-client\//),
  },
  { name: 'console observer', match: inFiles(/^src\/console\//) },
  { name: 'ledger', match: inFiles(/^src\/ledger\//) },
  {
    name: 'pipeline plumbing (serve, exchange, stages, observers)',
    match: inFiles(/^src\/server\/serve\./, /^src\/pipeline\/(compose|exchange|stage-context|observer|dispatch|admission|drops)\./, /^src\/runtime\//),
  },
  { name: 'fastify (routing, hooks, reply)', match: inFiles(/^node_modules\/(fastify|find-my-way|avvio|light-my-request|@fastify)\//) },
];

export interface PartCost {
  name: string;
  instructions: number;
  functions: string[];
}

/** Rounds of pushing unclaimed cost up to callers; what is still unclaimed after them is the remainder. */
const ROUNDS = 60;

/**
 * Each part's cost in a profile, and the remainder. A function of a part keeps its self cost;
 * the self cost of a function no part claims (a builtin, a library, the runtime) goes up to its
 * callers in proportion to what each one's calls to it cost (gprof's assumption), round after
 * round, until it reaches a part's function or a caller-less root (the remainder). JavaScript
 * calls JavaScript through builtins (call trampolines, promise reactions), so summing inclusive
 * costs would count a callee's part twice; pushing self costs up counts every instruction once.
 */
export function partCosts(profile: Profile): { parts: PartCost[]; remainder: number } {
  const owner = new Map<string, number>();
  for (const name of profile.functions.keys()) {
    const i = PARTS.findIndex((p) => p.match(name));
    if (i >= 0) owner.set(name, i);
  }
  const callers = new Map<string, [string, number][]>();
  for (const [caller, out] of profile.calls) {
    for (const [callee, cost] of out) {
      let list = callers.get(callee);
      if (!list) callers.set(callee, (list = []));
      list.push([caller, cost]);
    }
  }
  const parts: PartCost[] = PARTS.map((p) => ({ name: p.name, instructions: 0, functions: [] }));
  let mass = new Map<string, number>();
  for (const f of profile.functions.values()) {
    const i = owner.get(f.name);
    if (i === undefined) mass.set(f.name, f.self);
    else {
      parts[i].instructions += f.self;
      parts[i].functions.push(f.name);
    }
  }
  let remainder = 0;
  for (let round = 0; round < ROUNDS && mass.size > 0; round++) {
    const next = new Map<string, number>();
    for (const [name, m] of mass) {
      const up = callers.get(name);
      const sum = up?.reduce((n, [, c]) => n + c, 0) ?? 0;
      if (!up || sum <= 0) {
        remainder += m;
        continue;
      }
      for (const [caller, c] of up) {
        const share = (m * c) / sum;
        const i = owner.get(caller);
        if (i !== undefined) parts[i].instructions += share;
        else next.set(caller, (next.get(caller) ?? 0) + share);
      }
    }
    mass = next;
  }
  for (const m of mass.values()) remainder += m;
  for (const p of parts) p.functions.sort((a, b) => (profile.functions.get(b)?.inclusive ?? 0) - (profile.functions.get(a)?.inclusive ?? 0));
  return { parts, remainder };
}
