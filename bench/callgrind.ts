/**
 * Reads a callgrind output file (valgrind --tool=callgrind, format: valgrind.org's "Callgrind
 * Format Specification") into each function's self and inclusive instruction counts. Code that
 * V8 compiled at run time has no ELF symbol, so callgrind names it by address ("0x…"); Node's
 * --perf-basic-prof writes /tmp/perf-<pid>.map (start, size, name per compiled function), which
 * turns those addresses back into JavaScript function names with their file and line.
 */
import { readFileSync } from 'node:fs';

export interface FunctionCost {
  name: string;
  self: number;
  /** Self plus what its calls to other functions cost (a call to itself is not counted twice). */
  inclusive: number;
}

export interface Profile {
  total: number;
  /** Every event's total over the dump, by callgrind's name (Ir; with --cache-sim also I1mr, D1mr, D1mw, ILmr, DLmr, DLmw). */
  events: Record<string, number>;
  functions: Map<string, FunctionCost>;
  /** Inclusive cost of the calls from each function to each other one. */
  calls: Map<string, Map<string, number>>;
}

/** Address ranges of compiled JavaScript, sorted by start, the last entry for an address winning (code freed and reused). */
class PerfMap {
  #starts: number[] = [];
  #ends: number[] = [];
  #names: string[] = [];

  constructor(text: string) {
    const entries: [number, number, string][] = [];
    text.split('\n').forEach((line, order) => {
      const first = line.indexOf(' ');
      const second = line.indexOf(' ', first + 1);
      if (first < 0 || second < 0) return;
      const start = Number.parseInt(line.slice(0, first), 16);
      entries.push([start, start + Number.parseInt(line.slice(first + 1, second), 16), `${order}\u0000${line.slice(second + 1)}`]);
    });
    // Same start: the later line (newer code) sorts last and wins the lookup below.
    entries.sort((a, b) => a[0] - b[0] || Number(a[2].split('\u0000')[0]) - Number(b[2].split('\u0000')[0]));
    for (const [start, end, name] of entries) {
      this.#starts.push(start);
      this.#ends.push(end);
      this.#names.push(name.slice(name.indexOf('\u0000') + 1));
    }
  }

  lookup(address: number): string | undefined {
    let lo = 0;
    let hi = this.#starts.length - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (this.#starts[mid] <= address) {
        found = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    // Walk back over ranges starting earlier that may still cover the address.
    for (let i = found; i >= 0 && i > found - 64; i--) if (address < this.#ends[i]) return this.#names[i];
    return undefined;
  }
}

/** A JavaScript name from the perf map, shortened: "JS:*handle file:///…/dist/src/x.js:3:9" → "handle src/x.js:3". */
function jsName(raw: string): string {
  const m = /^(?:JS|LazyCompile|Function):[*~^+-]?'?(\S*)\s+(?:file:\/\/)?(\S+?)(?::(\d+))?(?::\d+)?$/.exec(raw);
  if (!m) return raw;
  const file = m[2].replace(/^.*?\/(dist\/src|src|bench|node_modules)\//, (_, dir: string) => (dir === 'dist/src' ? 'src/' : `${dir}/`)).replace(/^node:/, 'node:');
  return `${m[1] || '(anonymous)'} ${file}${m[3] ? `:${m[3]}` : ''}`;
}

/**
 * Parses one dump. Names are merged: every address of one JavaScript function (its tiers, its
 * resume points) counts as that function, so inclusive costs are per function, not per address.
 */
export function readProfile(file: string, perfMapFile?: string): Profile {
  const map = perfMapFile ? new PerfMap(readFileSync(perfMapFile, 'utf8')) : undefined;
  const ids = new Map<string, string>();
  /** "(12) name" or "(12)": name compression of the format. */
  const named = (spec: string): string => {
    const m = /^\((\d+)\)\s*(.*)$/.exec(spec);
    if (!m) return resolve(spec);
    if (m[2]) ids.set(m[1], resolve(m[2]));
    return ids.get(m[1]) ?? `(${m[1]})`;
  };
  const resolve = (name: string): string => {
    if (!name.startsWith('0x') || !map) return name;
    const js = map.lookup(Number.parseInt(name, 16));
    return js ? jsName(js) : 'JIT code (unnamed)';
  };
  const functions = new Map<string, FunctionCost>();
  const cost = (name: string) => {
    let f = functions.get(name);
    if (!f) functions.set(name, (f = { name, self: 0, inclusive: 0 }));
    return f;
  };
  const calls = new Map<string, Map<string, number>>();
  let fn: FunctionCost | undefined;
  let callee: string | undefined;
  let inCall = false;
  let total = 0;
  let names: string[] = ['Ir'];
  const events: Record<string, number> = {};
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line) continue;
    const c = line.charCodeAt(0);
    const isCost = (c >= 48 && c <= 57) || c === 43 || c === 45 || c === 42; // digit, +, -, *
    if (isCost) {
      // "<line> <Ir> [<other events>…]": instructions are the first event (trailing zeros may be left off).
      const first = line.indexOf(' ');
      const second = line.indexOf(' ', first + 1);
      const value = Number(line.slice(first + 1, second < 0 ? undefined : second));
      if (!fn || !Number.isFinite(value)) continue;
      if (inCall) {
        if (callee !== undefined && callee !== fn.name) {
          fn.inclusive += value;
          let out = calls.get(fn.name);
          if (!out) calls.set(fn.name, (out = new Map()));
          out.set(callee, (out.get(callee) ?? 0) + value);
        }
        inCall = false;
      } else {
        fn.self += value;
        fn.inclusive += value;
        total += value;
      }
    } else if (line.startsWith('fn=')) fn = cost(named(line.slice(3)));
    else if (line.startsWith('cfn=')) callee = named(line.slice(4));
    else if (line.startsWith('calls=')) inCall = true;
    else if (line.startsWith('events:')) names = line.slice(7).trim().split(/\s+/);
    else if (line.startsWith('summary:') || line.startsWith('totals:'))
      line
        .slice(line.indexOf(':') + 1)
        .trim()
        .split(/\s+/)
        .forEach((v, i) => (events[names[i]] = Number(v)));
  }
  return { total, events, functions, calls };
}
