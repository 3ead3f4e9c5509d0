/**
 * `${VAR}` and `${VAR:-default}` in string values, resolved on the YAML document itself so that
 * errors keep their positions. `$${VAR}` is a literal `${VAR}`.
 */
import { parse as parseYamlScalar, type Scalar } from 'yaml';
import { visitScalars, type ConfigSource } from './source.ts';
import { formatPath, type PathSegment } from './issues.ts';

const REFERENCE = /\$(\$?)\{([A-Za-z_][A-Za-z0-9_]*)(?::-(.*?))?\}/g;

export interface UnsetVariable {
  name: string;
  path: PathSegment[];
  line: number;
  col: number;
}

/** Rewrites the document in place. Returns the unset variables (no default) it met, with where. */
export function interpolate(source: ConfigSource, env: NodeJS.ProcessEnv): UnsetVariable[] {
  const unset: UnsetVariable[] = [];
  visitScalars(source.doc.contents, [], (scalar: Scalar, path) => {
    if (typeof scalar.value !== 'string' || !scalar.value.includes('${')) return;
    const raw = scalar.value;
    let missing = false;
    const value = raw.replace(REFERENCE, (match, escaped: string, name: string, fallback: string | undefined) => {
      if (escaped) return match.slice(1);
      const v = env[name];
      if (v !== undefined && v !== '') return v;
      if (fallback !== undefined) return fallback;
      missing = true;
      const { line, col } = source.positionOf(scalar);
      unset.push({ name, path, line, col });
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

export function describeUnset(u: UnsetVariable): string {
  return `environment variable ${u.name} is not set (at ${formatPath(u.path)})`;
}
