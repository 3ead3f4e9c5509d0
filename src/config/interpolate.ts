/**
 * `${VAR}`, `${VAR:-default}` and `${file:<path>}` in string values, resolved on the YAML
 * document itself so that errors keep their positions. `$${VAR}` is a literal `${VAR}`.
 */
import { parse as parseYamlScalar, type Scalar } from 'yaml';
import { visitScalars, type ConfigSource } from './source.ts';
import { formatPath, type PathSegment } from './issues.ts';
import { SecretFiles } from './secret-files.ts';

// `file:` not followed by `-`, so `${file:-x}` stays a variable named `file` with a default.
const REFERENCE = /\$(\$?)\{(?:file:(?!-)([^}]*)|([A-Za-z_][A-Za-z0-9_]*)(?::-(.*?))?)\}/g;

export interface UnsetVariable {
  /** The variable's name, or for `${file:...}` the path as written. */
  name: string;
  path: PathSegment[];
  line: number;
  col: number;
  /** For `${file:...}`: the file (absolute) and why it could not be read. */
  file?: { path: string; reason: string };
}

/**
 * Rewrites the document in place. Returns the references it could not resolve (an unset variable
 * without a default, an unreadable file), with where. `files` reads `${file:...}` (default: paths
 * relative to the working directory).
 */
export function interpolate(source: ConfigSource, env: NodeJS.ProcessEnv, files: SecretFiles = new SecretFiles(process.cwd())): UnsetVariable[] {
  const unset: UnsetVariable[] = [];
  visitScalars(source.doc.contents, [], (scalar: Scalar, path) => {
    if (typeof scalar.value !== 'string' || !scalar.value.includes('${')) return;
    const raw = scalar.value;
    let missing = false;
    const value = raw.replace(REFERENCE, (match, escaped: string, file: string | undefined, name: string | undefined, fallback: string | undefined) => {
      if (escaped) return match.slice(1);
      if (file !== undefined) {
        const read = files.read(file);
        if ('value' in read) return read.value;
        missing = true;
        unset.push({ name: file, path, ...source.positionOf(scalar), file: { path: read.file, reason: read.reason } });
        return match;
      }
      const v = env[name!];
      if (v !== undefined && v !== '') return v;
      if (fallback !== undefined) return fallback;
      missing = true;
      unset.push({ name: name!, path, ...source.positionOf(scalar) });
      // Keep the reference text: the value stays a string, and messages can quote it.
      return match;
    });
    if (missing) return;
    // A plain scalar that was only a reference takes the type of what it became (`port: ${PORT:-8080}`).
    const whole = raw.match(REFERENCE)?.[0] === raw;
    if (whole && scalar.type === 'PLAIN') {
      const typed: unknown = safeScalar(value);
      scalar.value = typed;
    } else scalar.value = value;
  });
  return unset;
}

function safeScalar(text: string): unknown {
  try {
    const v: unknown = parseYamlScalar(text);
    return typeof v === 'number' || typeof v === 'boolean' ? v : text;
  } catch {
    return text;
  }
}

/** What could not be resolved, without the position: `environment variable X is not set` or `cannot read file F (why)`. */
export function unresolvedReason(u: UnsetVariable): string {
  return u.file ? `cannot read the file ${u.file.path} (${u.file.reason})` : `environment variable ${u.name} is not set`;
}

export function describeUnset(u: UnsetVariable): string {
  return `${unresolvedReason(u)} (at ${formatPath(u.path)})`;
}
