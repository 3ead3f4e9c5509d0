import { writeSync } from 'node:fs';
import pino, { type DestinationStream, type Logger, type LoggerOptions } from 'pino';

export interface LoggerSettings {
  level: string;
  format: 'auto' | 'json' | 'pretty';
}

// Defence in depth: the gateway never logs headers or options, but a plugin might.
// No wildcards: those make every log call walk the object.
const REDACT = ['authorization', 'headers.authorization', 'apiKey', 'api_key', 'secretAccessKey', 'options.apiKey'];

/** Lines gathered before a write: a write per 4 KiB instead of per request. */
const BATCH_CHARS = 4096;

/**
 * JSON lines to stdout through an asynchronous buffered writer (no sync I/O on the request
 * path); pretty-printed in a worker thread when stdout is a terminal or when asked.
 * The caller flushes on shutdown (`logger.flush()`).
 */
export function createLogger(settings: LoggerSettings): Logger {
  const options: LoggerOptions = { level: settings.level, base: { service: 'switchyard' }, redact: { paths: REDACT, censor: '[REDACTED]' } };
  const pretty = settings.format === 'pretty' || (settings.format === 'auto' && process.stdout.isTTY);
  if (pretty) {
    return pino({ ...options, transport: { target: 'pino-pretty', options: { colorize: true, translateTime: 'HH:MM:ss.l', ignore: 'pid,hostname,service' } } });
  }
  // sonic-boom writes each batch as it comes (minLength 1: its flush still waits for the write).
  const lines = new LineBatch(pino.destination({ dest: 1, sync: false, minLength: 1 }), 1);
  // Flushed at least every 200 ms, so a quiet gateway still logs promptly.
  setInterval(() => lines.flush(), 200).unref();
  return pino(options, lines);
}

/** What LineBatch hands its batches to (pino.destination's sonic-boom). */
export interface LineSink {
  write(text: string): unknown;
  flush(cb?: (err?: Error) => void): void;
  flushSync(): void;
}

/**
 * pino's destination: lines are gathered in an array and handed on in batches of `minChars`.
 * sonic-boom can batch by itself (its minLength), but then measures the whole pending text in
 * bytes on every line (Buffer.byteLength of a growing string), which cost a request more than
 * serialising its line; an array and a character count cost nothing per line. A process that
 * exits without flushing (process.exit, a crash) writes what is gathered synchronously.
 */
export class LineBatch implements DestinationStream {
  readonly #out: LineSink;
  readonly #fd: number;
  readonly #minChars: number;
  #lines: string[] = [];
  #chars = 0;

  /** @param fd where `out` writes, for the last lines at exit. */
  constructor(out: LineSink, fd: number, minChars = BATCH_CHARS) {
    this.#out = out;
    this.#fd = fd;
    this.#minChars = minChars;
    unflushed.add(this);
  }

  write(line: string): void {
    this.#lines.push(line);
    this.#chars += line.length;
    if (this.#chars >= this.#minChars) this.#out.write(this.#take());
  }

  /** Hands on what is gathered (`out` writes it at once); with `cb`, calls it once `out` has written everything. */
  flush(cb?: (err?: Error) => void): void {
    if (this.#chars > 0) this.#out.write(this.#take());
    if (cb) this.#out.flush(cb);
  }

  /** At exit: `out`'s pending text first (it may have been ended already), then ours, in order. */
  flushSync(): void {
    try {
      this.#out.flushSync();
    } catch {
      // Ended or not open: nothing of ours is pending there.
    }
    if (this.#chars > 0) writeSync(this.#fd, this.#take());
  }

  #take(): string {
    const text = this.#lines.join('');
    this.#lines = [];
    this.#chars = 0;
    return text;
  }
}

/** Every batch of the process, written out when it exits. */
const unflushed = new Set<LineBatch>();
process.on('exit', () => {
  for (const batch of unflushed) batch.flushSync();
});
