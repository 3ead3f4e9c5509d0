/** Reading a Prometheus scrape, checking it with promtool, and an OTLP/HTTP JSON receiver: what the observability suites share. */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of a text exposition (comments skipped). */
export function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m) throw new Error(`not an exposition line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]] = l[2].replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    samples.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return samples;
}

/** The value of the one sample with this name whose labels include `labels` (0 when there is none). */
export function sampleValue(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  const found = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} match ${JSON.stringify(labels)}`);
  return found[0]?.value ?? 0;
}

/** Sum over every sample with this name whose labels include `labels`. */
export function sumOf(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((a, s) => a + s.value, 0);
}

/** The gateway's own series (switchyard_* and gen_ai_*), as `name{labels}` keys. */
export function gatewaySeries(samples: Sample[]): string[] {
  return samples.filter((s) => s.name.startsWith('switchyard_') || s.name.startsWith('gen_ai_')).map((s) => `${s.name}${JSON.stringify(s.labels)}`);
}

export async function scrape(url: string, headers: Record<string, string> = {}): Promise<{ status: number; text: string; contentType: string | null }> {
  const res = await fetch(url, { headers });
  return { status: res.status, text: await res.text(), contentType: res.headers.get('content-type') };
}

/**
 * Scrapes until the instruments have seen `requests` requests end and none is in flight: a
 * request is counted after its response (and log line), so a client may read its answer first.
 */
export async function settledScrape(url: string, requests: number, headers: Record<string, string> = {}): Promise<Sample[]> {
  for (let i = 0; i < 400; i++) {
    const samples = parseExposition((await scrape(url, headers)).text);
    if (sumOf(samples, 'switchyard_requests_total') >= requests && sampleValue(samples, 'switchyard_in_flight_requests') === 0) return samples;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`the metrics never counted ${requests} finished requests`);
}

/** A Prometheus tool (`promtool`, `prometheus`) from PATH or /usr/bin; CI installs Debian's `prometheus` package for both. */
export function prometheusTool(name: 'promtool' | 'prometheus'): string {
  for (const dir of [...(process.env.PATH ?? '').split(path.delimiter), '/usr/bin']) {
    const candidate = path.join(dir, name);
    if (dir && existsSync(candidate)) return candidate;
  }
  throw new Error(`${name} is required by the observability tests but was not found on PATH or in /usr/bin: install it (Debian/Ubuntu: apt-get install prometheus; macOS: brew install prometheus).`);
}

const promtool = (): string => prometheusTool('promtool');

/** `promtool check metrics` on the text: its lint findings, empty when it passes. */
export function promtoolProblems(text: string): string {
  const run = spawnSync(promtool(), ['check', 'metrics'], { input: text, encoding: 'utf8' });
  if (run.error) throw run.error;
  return run.status === 0 ? '' : `${run.stdout}${run.stderr}`.trim() || `promtool exited with ${run.status}`;
}

// ---------------------------------------------------------------- OTLP/HTTP receiver

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  status?: { code?: number; message?: string };
  serviceName?: string;
}

export const SPAN_KIND = { server: 2, client: 3 } as const;

export interface OtlpReceiver {
  url: string;
  spans: ReceivedSpan[];
  /** Content types of the export requests received. */
  contentTypes: string[];
  /** Waits until `predicate` holds for the spans received (the exporter sends in batches). */
  waitFor(predicate: (spans: ReceivedSpan[]) => boolean, what: string): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

/** A collector on 127.0.0.1 accepting OTLP/HTTP JSON at /v1/traces (protobuf requests are counted, not decoded). */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const contentTypes: string[] = [];
  const server: Server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      contentTypes.push(String(req.headers['content-type']));
      if (req.url === '/v1/traces' && String(req.headers['content-type']).startsWith('application/json')) spans.push(...decode(JSON.parse(Buffer.concat(parts).toString('utf8'))));
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    contentTypes,
    async waitFor(predicate, what) {
      for (let i = 0; i < 500; i++) {
        if (predicate(spans)) return spans;
        await new Promise((r) => setTimeout(r, 10));
      }
      throw new Error(`the collector never received ${what}; it has ${spans.map((s) => s.name).join(', ') || 'nothing'}`);
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

type OtlpValue = { stringValue?: string; intValue?: string | number; doubleValue?: number; boolValue?: boolean; arrayValue?: { values?: OtlpValue[] } };

function valueOfAttr(v: OtlpValue): unknown {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(valueOfAttr);
  return undefined;
}

function attributesOf(list: OtlpAttributes | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map((a) => [a.key, valueOfAttr(a.value)]));
}

type OtlpAttributes = Array<{ key: string; value: OtlpValue }>;
interface OtlpJsonSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: OtlpAttributes;
  status?: { code?: number; message?: string };
}
interface OtlpJson {
  resourceSpans?: Array<{ resource?: { attributes?: OtlpAttributes }; scopeSpans?: Array<{ spans?: OtlpJsonSpan[] }> }>;
}

/** OTLP JSON (ExportTraceServiceRequest): ids as hex strings, attributes as key/value lists. */
function decode(body: OtlpJson): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const rs of body.resourceSpans ?? []) {
    const serviceName = attributesOf(rs.resource?.attributes)['service.name'] as string | undefined;
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        out.push({
          traceId: s.traceId,
          spanId: s.spanId,
          parentSpanId: s.parentSpanId || undefined,
          name: s.name,
          kind: s.kind,
          attributes: attributesOf(s.attributes),
          status: s.status,
          serviceName,
        });
      }
    }
  }
  return out;
}
