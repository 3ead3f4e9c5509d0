/** One GC of V8's --trace-gc-nvp trace. */
export interface GcEvent {
  /** Milliseconds since the heap's start. */
  ms: number;
  /** `s` scavenge, `mc` mark-compact, ... */
  kind: string;
  pauseMs: number;
  allocated: number;
  promoted: number;
}

/** The GC trace's events in a process's output (--trace-gc-nvp: one `name=value` line per GC); other lines are skipped. */
export function gcEvents(log: string): GcEvent[] {
  const events: GcEvent[] = [];
  for (const line of log.split('\n')) {
    const m = /\s(\d+(?:\.\d+)?) ms: pause=(\d+(?:\.\d+)?) .* gc=(\w+) /.exec(line);
    if (!m) continue;
    const field = (name: string) => Number(new RegExp(` ${name}=(\\d+)`).exec(line)?.[1] ?? 0);
    events.push({ ms: Number(m[1]), pauseMs: Number(m[2]), kind: m[3], allocated: field('allocated'), promoted: field('promoted') });
  }
  return events;
}
