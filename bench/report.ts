/**
 * The benchmark's report: one markdown summary table of the issue's targets (each a median over
 * rounds, with its range, and PASS or MISS), then the figures behind it.
 */
import { type HoldCheck, HOLD_PAUSE_MS } from './hold.ts';
import { type Spread, slope, spread } from './stats.ts';

/** What one measured run of one server gave. */
export interface Figures {
  completed: number;
  errors: number;
  errorKinds: Record<string, number>;
  rps: number;
  /** Latency of the whole answer and time to its first body byte (single-connection runs only), ms. */
  p50: number;
  p99: number;
  ttfbP50: number;
  ttfbP99: number;
  /** utime + stime of the server process over the run, per completed request. */
  cpuUs: number;
  peakRssMb: number;
  /** Share of one core used by the server, and by the load core's two processes (generator + upstream). */
  serverBusy: number;
  loadBusy: number;
  /** Share of the run's time in which some task on the machine waited for a CPU (/proc/pressure/cpu). */
  cpuPressure: number;
  logBytesPerRequest: number;
  /** SYNs dropped on full listen queues during the run (machine-wide): a connection storm, not the server. */
  listenOverflows: number;
}

export type Scenario = 'plain' | 'stream' | 'miss' | 'responses' | 'latency' | 'ttfb' | 'slow';
export const SCENARIO_TITLES: Record<Scenario, string> = {
  plain: 'non-streamed, 10 connections',
  stream: 'streamed (20 events), 10 connections',
  miss: 'non-streamed, a new prompt each request, 10 connections',
  responses: 'Responses API, non-streamed, 10 connections',
  latency: 'non-streamed, 1 connection, sequential',
  ttfb: 'streamed, 1 connection, sequential',
  slow: '1,000 concurrent slow streams (50 ms between events)',
};

export interface SoakFigures {
  seconds: number;
  /** [seconds since start, RSS MB], one per second. */
  samples: [number, number][];
  completed: number;
  errors: number;
  errorKinds: Record<string, number>;
  cpuUs: number;
}

export interface BenchData {
  date: string;
  header: string[];
  /** Runs per `${scenario}/${server name}`, one per round, in round order. */
  runs: Map<string, Figures[]>;
  hop: string;
  /** The stack's floor: fastify + undici doing the same JSON work (bench/floor.mjs). */
  floor: string;
  gateway: string;
  variants: string[];
  /** The variants with the guardrails stage and with the cache stage. */
  guardrails: string;
  cache: string;
  /** The gateways serving the Responses load: stored Responses on (the default), and off. */
  stored: string;
  notStored: string;
  /** Whether a 20-event stream flowed before its end, per server. */
  hold: HoldCheck[];
  idleRssMb: Record<string, number>;
  idleAfterRssMb: number;
  soak: SoakFigures;
  notes: string[];
}

const runsOf = (data: BenchData, scenario: Scenario, server: string): Figures[] => data.runs.get(`${scenario}/${server}`) ?? [];
const field = (runs: Figures[], key: keyof Figures): Spread => spread(runs.map((r) => r[key] as number));

/** Per round, gateway's figure over (or minus) the hop's run in the same round; then their spread. */
function paired(data: BenchData, scenario: Scenario, key: keyof Figures, server: string, against: string, op: 'ratio' | 'delta'): Spread {
  const a = runsOf(data, scenario, server);
  const b = runsOf(data, scenario, against);
  const values = a.slice(0, b.length).map((r, i) => (op === 'ratio' ? (r[key] as number) / (b[i][key] as number) : (r[key] as number) - (b[i][key] as number)));
  return spread(values);
}

const num = (n: number, digits: number) => (Number.isFinite(n) ? n.toLocaleString('en-GB', { minimumFractionDigits: digits, maximumFractionDigits: digits }) : '—');
const sign = (n: number, digits: number) => `${n >= 0 ? '+' : '−'}${num(Math.abs(n), digits)}`;
/** "12.3 [11.9–13.0]": the median and, over several rounds, the range. */
function show(s: Spread, digits: number, format = (n: number) => num(n, digits)): string {
  return s.n > 1 ? `${format(s.median)} [${format(s.min)} – ${format(s.max)}]` : format(s.median);
}
const times = (s: Spread) => show(s, 2, (n) => `${num(n, 2)}×`);
const plus = (s: Spread, digits: number) => show(s, digits, (n) => sign(n, digits));

/** The soak's verdict: RSS flat over its second half, i.e. a least-squares slope within this bound. */
export const SOAK_FLAT_MB_PER_MIN = 2;

export function soakSummary(soak: SoakFigures): { first: number; last: number; peak: number; slopeMbPerMin: number } {
  const rss = soak.samples.map(([, mb]) => mb);
  const secondHalf = soak.samples.slice(Math.floor(soak.samples.length / 2));
  return { first: rss[0], last: rss[rss.length - 1], peak: Math.max(...rss), slopeMbPerMin: slope(secondHalf) * 60 };
}

export function renderReport(data: BenchData): string {
  const { hop, gateway } = data;
  const g = (scenario: Scenario, key: keyof Figures) => field(runsOf(data, scenario, gateway), key);
  const h = (scenario: Scenario, key: keyof Figures) => field(runsOf(data, scenario, hop), key);
  const ratio = (scenario: Scenario, key: keyof Figures) => paired(data, scenario, key, gateway, hop, 'ratio');
  const delta = (scenario: Scenario, key: keyof Figures) => paired(data, scenario, key, gateway, hop, 'delta');
  const slowErrors = runsOf(data, 'slow', gateway).reduce((n, r) => n + r.errors, 0);
  const underLoad = Math.max(...[...runsOf(data, 'plain', gateway), ...runsOf(data, 'stream', gateway)].map((r) => r.peakRssMb));
  const soak = soakSummary(data.soak);
  const verdict = (ok: boolean) => (ok ? 'PASS' : '**MISS**');

  const f = (scenario: Scenario, key: keyof Figures) => field(runsOf(data, scenario, data.floor), key);
  const rows: string[][] = [
    [
      'Non-streamed, 10 conns: CPU per request',
      `${show(h('plain', 'cpuUs'), 0)} µs`,
      `${show(g('plain', 'cpuUs'), 0)} µs`,
      times(ratio('plain', 'cpuUs')),
      '≤ 1.4×',
      verdict(ratio('plain', 'cpuUs').median <= 1.4),
    ],
    [
      'Non-streamed, 10 conns: throughput',
      `${show(h('plain', 'rps'), 0)} req/s`,
      `${show(g('plain', 'rps'), 0)} req/s`,
      times(ratio('plain', 'rps')),
      '≥ 0.7×',
      verdict(ratio('plain', 'rps').median >= 0.7),
    ],
    [
      'Streams (20 events): CPU per stream',
      `${show(h('stream', 'cpuUs'), 0)} µs`,
      `${show(g('stream', 'cpuUs'), 0)} µs`,
      times(ratio('stream', 'cpuUs')),
      '≤ 1.5×',
      verdict(ratio('stream', 'cpuUs').median <= 1.5),
    ],
    [
      'Streams: time to first byte, p50',
      `${show(h('ttfb', 'ttfbP50'), 3)} ms`,
      `${show(g('ttfb', 'ttfbP50'), 3)} ms`,
      `${plus(delta('ttfb', 'ttfbP50'), 3)} ms`,
      '≤ +0.5 ms',
      verdict(delta('ttfb', 'ttfbP50').median <= 0.5),
    ],
    [
      '1 connection: latency p50',
      `${show(h('latency', 'p50'), 3)} ms`,
      `${show(g('latency', 'p50'), 3)} ms`,
      `${plus(delta('latency', 'p50'), 3)} ms`,
      '≤ +0.2 ms',
      verdict(delta('latency', 'p50').median <= 0.2),
    ],
    [
      '1,000 slow streams: errors',
      num(
        runsOf(data, 'slow', hop).reduce((n, r) => n + r.errors, 0),
        0,
      ),
      num(slowErrors, 0),
      '',
      '0',
      verdict(slowErrors === 0),
    ],
    [
      '1,000 slow streams: throughput',
      `${show(h('slow', 'rps'), 0)} streams/s`,
      `${show(g('slow', 'rps'), 0)} streams/s`,
      times(ratio('slow', 'rps')),
      '≥ 0.9×',
      verdict(ratio('slow', 'rps').median >= 0.9),
    ],
    ['1,000 slow streams: stream duration p50 (ideal ≈ 1 s)', `${show(h('slow', 'p50'), 0)} ms`, `${show(g('slow', 'p50'), 0)} ms`, '', '', ''],
    ['1,000 slow streams: peak RSS', `${show(h('slow', 'peakRssMb'), 0)} MB`, `${show(g('slow', 'peakRssMb'), 0)} MB`, '', '≤ 250 MB', verdict(g('slow', 'peakRssMb').max <= 250)],
    [
      'Peak RSS under load: 10 conns, non-streamed and streamed',
      `${num(Math.max(...[...runsOf(data, 'plain', hop), ...runsOf(data, 'stream', hop)].map((r) => r.peakRssMb)), 0)} MB`,
      `${num(underLoad, 0)} MB`,
      '',
      '≤ 150 MB',
      verdict(underLoad <= 150),
    ],
    ['Peak RSS under load: mixed soak (with 200 slow streams)', '', `${num(soak.peak, 0)} MB`, '', '≤ 150 MB', verdict(soak.peak <= 150)],
    [
      `Memory soak (${num(data.soak.seconds, 0)} s mixed): RSS slope, last half`,
      '',
      `${sign(soak.slopeMbPerMin, 1)} MB/min`,
      '',
      `flat (≤ ${SOAK_FLAT_MB_PER_MIN} MB/min)`,
      verdict(soak.slopeMbPerMin <= SOAK_FLAT_MB_PER_MIN),
    ],
    ['Idle RSS after start', `${num(data.idleRssMb[hop], 0)} MB`, `${num(data.idleRssMb[gateway], 0)} MB`, '', 'in the README', ''],
  ];

  // The floor's figure beside the hop's, where the floor ran (the load runs and the slow streams, not the soak).
  const floorRan = (scenario: Scenario) => runsOf(data, scenario, data.floor).length > 0;
  const floorCells = [
    `${show(f('plain', 'cpuUs'), 0)} µs`,
    `${show(f('plain', 'rps'), 0)} req/s`,
    `${show(f('stream', 'cpuUs'), 0)} µs`,
    `${show(f('ttfb', 'ttfbP50'), 3)} ms`,
    `${show(f('latency', 'p50'), 3)} ms`,
    ...(floorRan('slow')
      ? [
          num(
            runsOf(data, 'slow', data.floor).reduce((n, r) => n + r.errors, 0),
            0,
          ),
          `${show(f('slow', 'rps'), 0)} streams/s`,
          `${show(f('slow', 'p50'), 0)} ms`,
          `${show(f('slow', 'peakRssMb'), 0)} MB`,
        ]
      : []),
  ];
  for (const [i, row] of rows.entries()) row.splice(2, 0, floorCells[i] ?? '');
  const overFloor = (scenario: Scenario) => times(paired(data, scenario, 'cpuUs', gateway, data.floor, 'ratio'));

  const out: string[] = [`# Switchyard benchmark, ${data.date}`, '', ...data.header, ''];
  out.push('## Summary: the gateway against the bare undici hop', '');
  out.push('Medians over rounds, [min – max] in brackets. A ratio or difference is taken within each round (whose gateway and hop blocks took turns), then its median over rounds.', '');
  out.push(table(['measure', 'bare undici hop', 'floor (fastify + undici)', 'gateway', 'gateway vs hop', 'target', ''], rows));
  out.push(
    '',
    `The floor (bench/floor.mjs) does the gateway's JSON work on the same stack and nothing else: the gateway's CPU is ${overFloor('plain')} the floor's per non-streamed request, ${overFloor('stream')} per stream, ${overFloor('latency')} on one connection${
      floorRan('slow')
        ? `, ${overFloor('slow')} per slow stream; at 1,000 slow streams the floor's throughput is ${times(paired(data, 'slow', 'rps', data.floor, hop, 'ratio'))} the hop's and the gateway's ${times(paired(data, 'slow', 'rps', gateway, data.floor, 'ratio'))} the floor's`
        : ''
    }.`,
  );

  out.push('', '## Features: CPU with each one on and off', '');
  out.push(
    "Same rounds as above (the variants' blocks took turns with the gateway's); Δ is against the gateway with everything on (log line, metrics, no tracing) in the same round, then its median.",
    '',
  );
  const featureRows = [gateway, ...data.variants].map((name) => {
    const d = (scenario: Scenario) => (name === gateway ? '' : plus(paired(data, scenario, 'cpuUs', name, gateway, 'delta'), 0));
    const s = (scenario: Scenario, key: keyof Figures, digits: number) => show(field(runsOf(data, scenario, name), key), digits);
    return [name, s('plain', 'cpuUs', 0), d('plain'), s('plain', 'rps', 0), s('stream', 'cpuUs', 0), d('stream'), s('plain', 'logBytesPerRequest', 0)];
  });
  out.push(table(['server', 'CPU µs/request', 'Δ µs', 'req/s', 'CPU µs/stream', 'Δ µs', 'log bytes/request'], featureRows));

  out.push('', ...guardrailsSection(data), '', ...cacheSection(data), '', ...storedSection(data));

  out.push('', '## Every run', '');
  out.push(
    'Core 1 busy: the server under test; core 0 busy: load generator + upstream (near 100 %, the load side limited the run). CPU pressure: share of the run in which some task on the machine waited for a CPU (other work on the machine shows here). Listen overflows: SYNs dropped on a full listen queue (a client then waits 1 s to retry).',
    '',
  );
  const runRows: string[][] = [];
  for (const [key, runs] of data.runs) {
    const [scenario, server] = key.split('/') as [Scenario, string];
    runs.forEach((r, i) =>
      runRows.push([
        SCENARIO_TITLES[scenario],
        server,
        String(i + 1),
        num(r.rps, 0),
        num(r.p50, 3),
        num(r.p99, 3),
        scenario === 'ttfb' ? num(r.ttfbP50, 3) : '',
        scenario === 'ttfb' ? num(r.ttfbP99, 3) : '',
        num(r.cpuUs, 0),
        num(r.peakRssMb, 0),
        `${num(r.serverBusy * 100, 0)} %`,
        `${num(r.loadBusy * 100, 0)} %`,
        `${num(r.cpuPressure * 100, 0)} %`,
        num(r.listenOverflows, 0),
        r.errors
          ? `${r.errors} (${Object.entries(r.errorKinds)
              .map(([k, n]) => `${k}: ${n}`)
              .join(', ')})`
          : '0',
      ]),
    );
  }
  out.push(
    table(
      ['run', 'server', 'round', 'req/s', 'p50 ms', 'p99 ms', 'TTFB p50 ms', 'TTFB p99 ms', 'CPU µs/req', 'peak RSS MB', 'core 1 busy', 'core 0 busy', 'CPU pressure', 'listen overflows', 'errors'],
      runRows,
    ),
  );

  out.push('', '## Memory soak', '');
  // About 20 points whatever the soak's length, every 5 s at least.
  const step = Math.max(5, Math.round(data.soak.seconds / 20 / 5) * 5);
  const points = data.soak.samples.filter(([t], i) => i === 0 || t % step === 0).map(([t, mb]) => `${t}s ${num(mb, 0)}`);
  out.push(
    `The gateway under mixed load for ${num(data.soak.seconds, 0)} s (non-streamed, streamed and slow streams at once): ${num(data.soak.completed, 0)} requests, ${data.soak.errors} errors${data.soak.errors ? ` (${JSON.stringify(data.soak.errorKinds)})` : ''}, ${num(data.soak.cpuUs, 0)} CPU µs/request.`,
    `RSS first ${num(soak.first, 0)} MB, last ${num(soak.last, 0)} MB, peak ${num(soak.peak, 0)} MB; least-squares slope over the second half ${sign(soak.slopeMbPerMin, 2)} MB/min; ${num(data.idleAfterRssMb, 0)} MB idle 5 s after all load (the 1,000-stream runs included).`,
    '',
    `RSS (MB) every ${step} s: ${points.join(' · ')}`,
  );
  if (data.notes.length) out.push('', '## Notes', '', ...data.notes.map((n) => `- ${n}`));
  return `${out.join('\n')}\n`;
}

/** The issue's guardrails targets: TTFB p50 up by less than 5 ms, a stream never held whole. */
export const GUARDRAILS_TTFB_MS = 5;

function guardrailsSection(data: BenchData): string[] {
  const { gateway, hop, guardrails } = data;
  const s = (scenario: Scenario, server: string, key: keyof Figures, digits: number) => show(field(runsOf(data, scenario, server), key), digits);
  const d = (scenario: Scenario, key: keyof Figures, digits: number) => plus(paired(data, scenario, key, guardrails, gateway, 'delta'), digits);
  const r = (scenario: Scenario, key: keyof Figures) => times(paired(data, scenario, key, guardrails, gateway, 'ratio'));
  const ttfbRise = paired(data, 'ttfb', 'ttfbP50', guardrails, gateway, 'delta');
  const rows = [
    [
      'Non-streamed, 10 conns: CPU per request',
      `${s('plain', hop, 'cpuUs', 0)} µs`,
      `${s('plain', gateway, 'cpuUs', 0)} µs`,
      `${s('plain', guardrails, 'cpuUs', 0)} µs`,
      `${d('plain', 'cpuUs', 0)} µs, ${r('plain', 'cpuUs')}`,
      '',
    ],
    [
      'Streams (20 events): CPU per stream',
      `${s('stream', hop, 'cpuUs', 0)} µs`,
      `${s('stream', gateway, 'cpuUs', 0)} µs`,
      `${s('stream', guardrails, 'cpuUs', 0)} µs`,
      `${d('stream', 'cpuUs', 0)} µs, ${r('stream', 'cpuUs')}`,
      '',
    ],
    ['1 connection: latency p50', `${s('latency', hop, 'p50', 3)} ms`, `${s('latency', gateway, 'p50', 3)} ms`, `${s('latency', guardrails, 'p50', 3)} ms`, `${d('latency', 'p50', 3)} ms`, ''],
    [
      'Streams, 1 connection: time to first byte p50',
      `${s('ttfb', hop, 'ttfbP50', 3)} ms`,
      `${s('ttfb', gateway, 'ttfbP50', 3)} ms`,
      `${s('ttfb', guardrails, 'ttfbP50', 3)} ms`,
      `${d('ttfb', 'ttfbP50', 3)} ms`,
      `< +${GUARDRAILS_TTFB_MS} ms: ${ttfbRise.median < GUARDRAILS_TTFB_MS ? 'PASS' : '**MISS**'}`,
    ],
    [
      'Streams, 1 connection: time to first byte p99',
      `${s('ttfb', hop, 'ttfbP99', 3)} ms`,
      `${s('ttfb', gateway, 'ttfbP99', 3)} ms`,
      `${s('ttfb', guardrails, 'ttfbP99', 3)} ms`,
      `${d('ttfb', 'ttfbP99', 3)} ms`,
      '',
    ],
  ];
  const holdRows = data.hold.map((h) => [
    h.server,
    `${h.streamsWithEarlyContent} of ${h.streams}`,
    `${num(h.charsBeforeFinish, 0)} of ${num(h.contentChars, 0)} (${num((100 * h.charsBeforeFinish) / h.contentChars, 1)} %)`,
    `${num(h.firstContentMs, 1)} ms`,
    `${num(h.endMs, 1)} ms`,
    String(h.errors),
    h.streams > 0 && h.errors === 0 && h.streamsWithEarlyContent === h.streams ? 'PASS' : '**MISS**',
  ]);
  return [
    '## Guardrails: the built-in detectors on and off',
    '',
    `"${guardrails}": the guardrails stage with rule \`pii\` (redact, restore) on the request and \`secrets\` (block) on the request and the answer, for every request. Δ and ratio against the gateway in the same round, then their median.`,
    '',
    table(['measure', 'bare undici hop', 'gateway', 'gateway, guardrails on', 'guardrails Δ', 'target'], rows),
    '',
    `Never held whole: the upstream's 20-event stream pauses ${num(HOLD_PAUSE_MS, 0)} ms after its 18 content events, before its finish event; content received more than half the pause before the stream's end passed through while the upstream still held the stream open. Target: every stream's first content arrives before the finish event.`,
    '',
    table(['server', 'streams with content before the finish', 'content characters before the finish', 'first content p50', 'stream end p50', 'errors', ''], holdRows),
  ];
}

function cacheSection(data: BenchData): string[] {
  const { gateway, hop, cache } = data;
  // A hit: the same request again (the plain runs); a miss: a new prompt each request.
  const cells = (scenario: Scenario, server: string) => {
    const f = field(runsOf(data, scenario, server), 'cpuUs');
    const rps = field(runsOf(data, scenario, server), 'rps');
    return [`${show(f, 0)} µs`, `${show(rps, 0)} req/s`];
  };
  const vs = (scenario: Scenario, against: Scenario, againstServer: string) => {
    const cpu = pairedAcross(data, scenario, cache, against, againstServer, 'cpuUs');
    const rps = pairedAcross(data, scenario, cache, against, againstServer, 'rps');
    return [times(cpu), times(rps)];
  };
  const rows = [
    ['bare undici hop (the same request)', ...cells('plain', hop), '', ''],
    ['bare undici hop (a new prompt each request)', ...cells('miss', hop), '', ''],
    ['gateway, no cache (a new prompt each request)', ...cells('miss', gateway), '', ''],
    ['cache miss (a new prompt each request)', ...cells('miss', cache), ...vs('miss', 'miss', hop)],
    ['cache hit (the same request again)', ...cells('plain', cache), ...vs('plain', 'plain', hop)],
    ['cache hit against a miss', '', '', ...vs('plain', 'miss', cache)],
    ['cache miss against the gateway without cache', '', '', ...vs('miss', 'miss', gateway)],
  ];
  return [
    '## Cache: a hit against a miss and the hop',
    '',
    `"${cache}": the cache stage (memory, scope key). Non-streamed, 10 connections; ratios within each round, then their median. A hit answers without calling the upstream.`,
    '',
    table(['server, requests', 'CPU µs/request', 'req/s', 'CPU vs the hop on the same requests (or as named)', 'req/s vs the hop (or as named)'], rows),
  ];
}

function storedSection(data: BenchData): string[] {
  const { gateway, stored, notStored } = data;
  const cells = (scenario: Scenario, server: string) => {
    const f = (key: keyof Figures) => show(field(runsOf(data, scenario, server), key), 0);
    return [`${f('cpuUs')} µs`, `${f('rps')} req/s`, `${f('peakRssMb')} MB`];
  };
  const price = paired(data, 'responses', 'cpuUs', stored, notStored, 'delta');
  const rows = [
    ['gateway, Chat Completions (the same prompt)', ...cells('plain', gateway), ''],
    [`${stored}: Responses`, ...cells('responses', stored), `${plus(price, 0)} µs, ${times(paired(data, 'responses', 'cpuUs', stored, notStored, 'ratio'))}`],
    [`${notStored}: Responses`, ...cells('responses', notStored), `${times(pairedAcross(data, 'responses', notStored, 'plain', gateway, 'cpuUs'))} the gateway's Chat Completions`],
  ];
  return [
    '## Stored Responses: kept and not',
    '',
    `The same prompt through \`POST /v1/responses\` (translated to chat for the upstream), non-streamed, 10 connections, on two gateways of their own. "${stored}" keeps each answer in its state file (\`store\` defaults to true), so a next turn may name it by \`previous_response_id\`; "${notStored}" keeps nothing (\`state.responses.enabled: false\`). Δ and ratio of the stored against the not stored in the same round, then their median.`,
    '',
    table(['server, requests', 'CPU µs/request', 'req/s', 'peak RSS', 'CPU: stored vs not stored (or as named)'], rows),
  ];
}

/** Per round, one server's figure in one scenario over another's in another scenario; then their spread. */
function pairedAcross(data: BenchData, scenario: Scenario, server: string, againstScenario: Scenario, against: string, key: keyof Figures): Spread {
  const a = runsOf(data, scenario, server);
  const b = runsOf(data, againstScenario, against);
  return spread(a.slice(0, b.length).map((r, i) => (r[key] as number) / (b[i][key] as number)));
}

function table(head: string[], rows: string[][]): string {
  return [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
}
