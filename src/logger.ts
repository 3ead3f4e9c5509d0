import pino, { type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import { type DirectJsonLines, directJsonLines } from './log-writer.ts';

export interface LoggerSettings {
  level: string;
  format: 'auto' | 'json' | 'pretty';
}

// Defence in depth: the gateway never logs headers or options, but a plugin might.
// No wildcards: those make every log call walk the object.
const REDACT = ['authorization', 'headers.authorization', 'apiKey', 'api_key', 'secretAccessKey', 'options.apiKey'];

/**
 * JSON lines to stdout through an asynchronous buffered writer (no sync I/O on the request
 * path); pretty-printed in a worker thread when stdout is a terminal or when asked.
 * The caller flushes on shutdown (`logger.flush()`).
 */
export function createLogger(settings: LoggerSettings): Logger {
  const direct = directJsonLines();
  const options: LoggerOptions = {
    level: settings.level,
    base: { service: 'switchyard' },
    redact: { paths: REDACT, censor: '[REDACTED]' },
    hooks: { logMethod: direct.logMethod },
  };
  const pretty = settings.format === 'pretty' || (settings.format === 'auto' && process.stdout.isTTY);
  if (pretty) {
    return trusted(pino({ ...options, transport: { target: 'pino-pretty', options: { colorize: true, translateTime: 'HH:MM:ss.l', ignore: 'pid,hostname,service' } } }), direct);
  }
  // Lines are batched (a write per 12 KiB instead of per request: each write is a round trip
  // through libuv's thread pool) and flushed at least every 200 ms, so a quiet gateway still logs
  // promptly. The batch holds Buffers: a batch of text made SonicBoom measure its whole batch in
  // UTF-8 again for every line it added (a flatten and a scan of up to 16 KiB per line).
  const destination = pino.destination({ dest: 1, sync: false, minLength: 12 * 1024, contentMode: 'buffer' });
  setInterval(() => destination.flush(), 200).unref();
  return trusted(pino(options, asBuffers(destination)), direct);
}

function trusted(logger: Logger, direct: DirectJsonLines): Logger {
  direct.trust(logger);
  return logger;
}

/** pino writes text; a destination in buffer mode takes each line as its UTF-8 bytes, flushed and ended through it. */
function asBuffers(destination: ReturnType<typeof pino.destination>): DestinationStream {
  return {
    // SonicBoom's typings say text; in buffer mode it takes Buffers.
    write: (line: string) => destination.write(Buffer.from(line) as unknown as string),
    flush: (cb?: (err?: Error) => void) => destination.flush(cb),
    flushSync: () => destination.flushSync(),
    end: () => destination.end(),
  } as DestinationStream;
}
