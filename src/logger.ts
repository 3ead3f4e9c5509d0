import pino, { type Logger, type LoggerOptions } from 'pino';
import { directJsonLines } from './log-writer.ts';

export interface LoggerSettings {
  level: string;
  format: 'auto' | 'json' | 'pretty';
}

// Defence in depth: the gateway never logs headers or options, but a plugin might.
// No wildcards: those make every log call walk the object.
const REDACT = ['authorization', 'headers.authorization', 'apiKey', 'api_key', 'secretAccessKey', 'options.apiKey'];
/** The top-level keys pino must see itself: redacted paths' first segments and pino's `err` serializer. */
const SPECIAL_KEYS = [...new Set(REDACT.map((p) => p.split('.')[0]))].concat('err');

/**
 * JSON lines to stdout through an asynchronous buffered writer (no sync I/O on the request
 * path); pretty-printed in a worker thread when stdout is a terminal or when asked.
 * The caller flushes on shutdown (`logger.flush()`).
 */
export function createLogger(settings: LoggerSettings): Logger {
  const options: LoggerOptions = {
    level: settings.level,
    base: { service: 'switchyard' },
    redact: { paths: REDACT, censor: '[REDACTED]' },
    hooks: { logMethod: directJsonLines(SPECIAL_KEYS) },
  };
  const pretty = settings.format === 'pretty' || (settings.format === 'auto' && process.stdout.isTTY);
  if (pretty) {
    return pino({ ...options, transport: { target: 'pino-pretty', options: { colorize: true, translateTime: 'HH:MM:ss.l', ignore: 'pid,hostname,service' } } });
  }
  // Lines are batched (a write per 4 KiB instead of per request) and flushed at least every
  // 200 ms, so a quiet gateway still logs promptly.
  const destination = pino.destination({ dest: 1, sync: false, minLength: 4096 });
  setInterval(() => destination.flush(), 200).unref();
  return pino(options, destination);
}
