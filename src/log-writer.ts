/**
 * A pino `logMethod` hook that writes a plain object's line with one JSON.stringify instead of
 * pino's field-by-field serialisation (a string concatenation per field and a JavaScript
 * escape scan per string): the request line costs about half the instructions. The bytes are
 * pino's own, prefix, bindings, fields and message in the same order. Everything pino treats
 * specially takes pino's own path: a redacted or serialised key, an object that is not plain, a
 * child logger with serializers or redaction of its own, a log formatter, a mixin or message prefix,
 * a stream that wants metadata, a value JSON.stringify refuses (a BigInt, a cycle).
 */
import pino, { type LogFn, type Logger } from 'pino';

// All exported by pino at run time (msgPrefixSym is missing from its typings).
const {
  chindingsSym,
  endSym,
  formattersSym,
  lsCacheSym,
  messageKeySym,
  mixinSym,
  msgPrefixSym,
  needsMetadataGsym,
  nestedKeySym,
  serializersSym,
  streamSym,
  stringifiersSym,
  timeSym,
  wildcardFirstSym,
} = pino.symbols as typeof pino.symbols & { msgPrefixSym: symbol };

/** A pino logger's state, read by pino's exported symbols. */
type PinoInternals = Record<symbol, unknown>;
interface Destination {
  write(line: string): unknown;
}

export interface DirectJsonLines {
  logMethod(this: Logger, args: Parameters<LogFn>, method: LogFn, level: number): void;
  /**
   * Names the logger the hook was made for, once it exists: its lines and its children's are
   * written directly while they share its serializers and redaction and have no log formatter
   * (a child given its own gets pino's path). Until then every line takes pino's path.
   */
  trust(logger: Logger): void;
}

export function directJsonLines(): DirectJsonLines {
  let trusted: { serializers: unknown; stringifiers: unknown; special: string[] } | undefined;
  return {
    trust(logger) {
      const root = logger as unknown as PinoInternals;
      const serializers = root[serializersSym] as object;
      const stringifiers = root[stringifiersSym] as object;
      // A wildcard redact path or serializer could apply to any key: such a logger keeps pino's path.
      if (stringifiers[wildcardFirstSym as keyof object] !== undefined || Object.getOwnPropertySymbols(serializers).length > 0) return;
      // The top-level keys pino must see itself: each redact path's first segment (pino keeps a
      // stringifier per such key) and each serializer's key (`err` among them).
      trusted = { serializers, stringifiers, special: [...Object.keys(stringifiers), ...Object.keys(serializers)] };
    },
    logMethod(args, method, level) {
      const obj = args[0] as Record<string, unknown> | null;
      const msg = args[1];
      const self = this as unknown as PinoInternals;
      if (
        args.length === 2 &&
        typeof msg === 'string' &&
        isPlainObject(obj) &&
        asTrusted(self) &&
        !hasAny(obj, trusted!.special) &&
        !self[mixinSym] &&
        self[msgPrefixSym] === undefined &&
        !self[nestedKeySym]
      ) {
        const stream = self[streamSym] as Destination & PinoInternals;
        const json = stringified(obj);
        if (json !== undefined && stream[needsMetadataGsym] !== true) {
          const fields = json.length > 2 ? `,${json.slice(1, -1)}` : '';
          const head = `${(self[lsCacheSym] as Record<number, string>)[level]}${(self[timeSym] as () => string)()}${self[chindingsSym] as string}`;
          stream.write(`${head}${fields},${JSON.stringify(self[messageKeySym])}:${JSON.stringify(msg)}${self[endSym] as string}`);
          return;
        }
      }
      method.apply(this, args);
    },
  };

  // A child without serializers or redaction of its own shares its parent's objects; its
  // formatters are rebuilt per child, and of them only a log formatter changes what is written.
  function asTrusted(self: PinoInternals): boolean {
    return trusted !== undefined && self[serializersSym] === trusted.serializers && self[stringifiersSym] === trusted.stringifiers && (self[formattersSym] as { log?: unknown }).log === undefined;
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const proto = Object.getPrototypeOf(value);
  // A toJSON of its own would make JSON.stringify write something other than its fields.
  return (proto === Object.prototype || proto === null) && typeof (value as { toJSON?: unknown }).toJSON !== 'function';
}

function hasAny(obj: Record<string, unknown>, keys: readonly string[]): boolean {
  for (let i = 0; i < keys.length; i++) if (Object.hasOwn(obj, keys[i])) return true;
  return false;
}

function stringified(obj: Record<string, unknown>): string | undefined {
  try {
    return JSON.stringify(obj);
  } catch {
    return undefined;
  }
}
