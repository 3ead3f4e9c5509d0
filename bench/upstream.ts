/**
 * The benchmark's fake OpenAI upstream, and its OTLP sink, on 127.0.0.1.
 *
 *   POST …/chat/completions  non-streamed: one fixed completion. Streamed: 20 `data:` events and
 *                            `data: [DONE]`, each event written on its own, as a model's tokens
 *                            arrive (one event loop turn apart; 50 ms apart when the model's name
 *                            contains "slow"; when it contains "hold", a pause of 300 ms after
 *                            the 18 content events, before the finish and usage events).
 *   POST /v1/traces          an OTLP/HTTP collector that reads and discards (an empty body is an
 *                            empty ExportTraceServiceResponse, valid in protobuf and JSON).
 *   GET  /stats              how many trace exports arrived, as JSON.
 *
 * The answer's bytes depend only on the model's name, so the gateway (which renames the model to
 * its target's, `bench` → `bench`) and the hop (which forwards the body as it is) get the same.
 * Usage: node bench/upstream.ts <port>
 */
import { createServer, type ServerResponse } from 'node:http';
import { HOLD_PAUSE_MS } from './hold.ts';

const STREAM_EVENTS = 20;
const SLOW_GAP_MS = 50;
const WORDS = 'Hello from the benchmark upstream: every one of these words is a chunk of its own, like tokens.'.split(' ');
const CREATED = 1_700_000_000;

let traceExports = 0;
const cache = new Map<string, { completion: string; events: string[] }>();

/** The completion and the stream events for one model name, built once. */
function answersFor(model: string): { completion: string; events: string[] } {
  let answers = cache.get(model);
  if (answers) return answers;
  const usage = { prompt_tokens: 24, completion_tokens: STREAM_EVENTS - 2, total_tokens: 24 + STREAM_EVENTS - 2 };
  const chunk = (choices: unknown[], extra = {}) => `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: CREATED, model, choices, ...extra })}\n\n`;
  const events: string[] = [];
  // 18 content events (the first also carries the role), one with finish_reason, one with usage.
  for (let i = 0; i < STREAM_EVENTS - 2; i++) {
    const delta = i === 0 ? { role: 'assistant', content: WORDS[0] } : { content: ` ${WORDS[i % WORDS.length]}` };
    events.push(chunk([{ index: 0, delta, finish_reason: null }]));
  }
  events.push(chunk([{ index: 0, delta: {}, finish_reason: 'stop' }]));
  events.push(chunk([], { usage }));
  events.push('data: [DONE]\n\n');
  const content = WORDS.slice(0, STREAM_EVENTS - 2).join(' ');
  const completion = JSON.stringify({
    id: 'chatcmpl-bench',
    object: 'chat.completion',
    created: CREATED,
    model,
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
    usage,
  });
  answers = { completion, events };
  cache.set(model, answers);
  return answers;
}

function stream(res: ServerResponse, events: string[], gapMs: number, hold: boolean): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  let next = 0;
  const writeNext = () => {
    if (res.destroyed) return;
    if (next === events.length - 1) return void res.end(events[next]);
    res.write(events[next++]);
    if (hold && next === STREAM_EVENTS - 2) setTimeout(writeNext, HOLD_PAUSE_MS);
    else if (gapMs > 0) setTimeout(writeNext, gapMs);
    else setImmediate(writeNext);
  };
  writeNext();
}

const server = createServer((req, res) => {
  const parts: Buffer[] = [];
  req.on('data', (d: Buffer) => parts.push(d));
  req.on('end', () => {
    if (req.url === '/v1/traces') {
      traceExports++;
      res.writeHead(200, { 'content-type': String(req.headers['content-type'] ?? 'application/x-protobuf'), 'content-length': 0 });
      return void res.end();
    }
    if (req.url === '/stats') return void res.end(JSON.stringify({ traceExports }));
    let request: { model?: unknown; stream?: unknown };
    try {
      request = JSON.parse(Buffer.concat(parts).toString('utf8'));
    } catch {
      res.writeHead(400, { 'content-type': 'application/json' });
      return void res.end('{"error":{"message":"bad JSON","type":"invalid_request_error"}}');
    }
    const model = typeof request.model === 'string' ? request.model : 'bench';
    const { completion, events } = answersFor(model);
    if (request.stream === true) return stream(res, events, model.includes('slow') ? SLOW_GAP_MS : 0, model.includes('hold'));
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(completion) });
    res.end(completion);
  });
});
server.keepAliveTimeout = 120_000;
server.maxConnections = 5_000;
server.listen(Number(process.argv[2]), '127.0.0.1');
