/**
 * Recorded upstream answers in a folder the caller names (each plugin keeps its own), in the
 * layout of this repository's test/fixtures (see its README):
 *
 *   <name>.meta.json     { "status": 200, "headers": { ... } }
 *   <name>.json | .sse | .bin   the body bytes exactly as recorded
 *   <name>.request.json  the request that produced it (optional)
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodeSseJson, type SseJsonEvent } from '../index.ts';
import type { ScriptedResponse } from './fake-upstream.ts';

export interface Fixture {
  status: number;
  headers: Record<string, string>;
  /** Raw body bytes exactly as recorded. */
  body: Buffer;
  /** Parsed JSON body when the fixture is JSON. */
  // biome-ignore lint/suspicious/noExplicitAny: a recorded provider body, read by tests as they find it
  json?: any;
  /** The recorded request body, when there is a `<name>.request.json`. */
  // biome-ignore lint/suspicious/noExplicitAny: a recorded request body, read by tests as they find it
  request?: any;
  kind: 'json' | 'sse' | 'bin';
}

/** A folder as a path or a `file:` URL (`new URL('./fixtures/', import.meta.url)`). */
export type FixtureFolder = string | URL;

const BODY_KINDS = ['json', 'sse', 'bin'] as const;

/**
 * Reads `<dir>/<file>`; a missing file throws at once, naming the path (a test must fail
 * clearly, not wait for an answer that never comes).
 */
export function readFixtureFile(dir: FixtureFolder, file: string): Buffer {
  const folder = dir instanceof URL ? fileURLToPath(dir) : dir;
  const full = path.join(folder, file);
  if (!existsSync(full)) {
    if (!existsSync(folder)) throw new Error(`fixture folder ${folder} does not exist (looking for ${file})`);
    throw new Error(`fixture file ${full} does not exist`);
  }
  return readFileSync(full);
}

/** Loads the recorded answer `<dir>/<name>.*`. */
export function loadFixture(dir: FixtureFolder, name: string): Fixture {
  const folder = dir instanceof URL ? fileURLToPath(dir) : dir;
  if (!existsSync(path.join(folder, `${name}.meta.json`))) {
    const known = casesIn(folder);
    throw new Error(`fixture "${name}" not found: ${path.join(folder, `${name}.meta.json`)} does not exist${known.length ? ` (the folder has: ${known.join(', ')})` : ''}`);
  }
  const meta = JSON.parse(readFixtureFile(folder, `${name}.meta.json`).toString('utf8')) as { status: number; headers?: Record<string, string> };
  const request = existsSync(path.join(folder, `${name}.request.json`)) ? JSON.parse(readFixtureFile(folder, `${name}.request.json`).toString('utf8')) : undefined;
  const kind = BODY_KINDS.find((k) => existsSync(path.join(folder, `${name}.${k}`)));
  if (!kind) throw new Error(`fixture "${name}" in ${folder} has no body file (${name}.json, .sse or .bin)`);
  const body = readFixtureFile(folder, `${name}.${kind}`);
  return { status: meta.status, headers: meta.headers ?? {}, body, json: kind === 'json' ? JSON.parse(body.toString('utf8')) : undefined, request, kind };
}

/** The case names in a fixtures folder, to show when a name is mistyped. */
function casesIn(folder: string): string[] {
  if (!existsSync(folder)) return [];
  return readdirSync(folder)
    .filter((f) => f.endsWith('.meta.json'))
    .map((f) => f.slice(0, -'.meta.json'.length));
}

/** The fixture as a scripted response: status, headers and the body bytes unchanged. */
export function replay(fixture: Fixture, extra: Partial<ScriptedResponse> = {}): ScriptedResponse {
  if (fixture.kind === 'json') return { status: fixture.status, headers: fixture.headers, body: fixture.body, ...extra };
  return { status: fixture.status, headers: fixture.headers, chunks: splitStream(fixture), ...extra };
}

/** Splits a recorded stream into its events (SSE) so the fake sends them one write at a time. */
export function splitStream(fixture: Fixture): Buffer[] {
  if (fixture.kind === 'bin') return [fixture.body];
  const text = fixture.body.toString('utf8');
  const separator = text.includes('\r\n\r\n') ? '\r\n\r\n' : '\n\n';
  return text
    .split(separator)
    .filter((e) => e.length > 0)
    .map((e) => Buffer.from(e + separator));
}

/** A recorded `.sse` fixture through the core's SSE decoder, as a stream translator sees it. */
export async function sseEventsOf(dir: FixtureFolder, name: string): Promise<SseJsonEvent[]> {
  const bytes = loadFixture(dir, name).body;
  const events: SseJsonEvent[] = [];
  for await (const e of decodeSseJson(
    (async function* () {
      yield new Uint8Array(bytes);
    })(),
  ))
    events.push(e);
  return events;
}
