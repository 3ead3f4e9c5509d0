/**
 * The console's Configuration view: gateway.yaml as an operator wrote it, with every secret
 * masked, and a dry run of a pasted edit that reports what a reload would (file:line:col),
 * without applying anything.
 */
import { readFile } from 'node:fs/promises';
import { parseDocument, type Scalar } from 'yaml';
import { parseConfigText } from '../config/load.ts';
import { ConfigError, formatIssue } from '../config/issues.ts';
import { visitScalars } from '../config/source.ts';
import type { PathSegment } from '../config/issues.ts';
import { createLogger } from '../logger.ts';
import { buildRuntime, type Runtime } from '../runtime/build.ts';

export const MASK = '"********"';
/** Option names that hold a secret in any plugin we do not know the `secretOptions` of. */
const SECRET_NAME = /key|secret|token|password|credential/i;
/** A value that only names an environment variable shows where the secret lives, not the secret. */
const VARIABLE_ONLY = /^\$\{[A-Za-z_][A-Za-z0-9_]*\}$/;

/**
 * gateway.yaml's text with the values of secret fields masked in place (so line and column
 * numbers still match what the gateway reports): each provider's `secretOptions` (and any
 * option named like a secret), every `keys[].key` and `admin.keys[].key`. Whatever configured
 * secret is left (in a header value, say) is scrubbed by the generation's redactor after that.
 */
export function maskConfigText(text: string, runtime: Pick<Runtime, 'providers' | 'redact'>): string {
  const doc = parseDocument(text);
  const ranges: Array<[number, number]> = [];
  const secretOptions = (provider: string): readonly string[] => runtime.providers.get(provider)?.plugin.secretOptions ?? [];
  visitScalars(doc.contents, [], (scalar: Scalar, path: PathSegment[]) => {
    if (!scalar.range || !isSecretPath(path, secretOptions)) return;
    if (typeof scalar.value === 'string' && VARIABLE_ONLY.test(scalar.value)) return;
    ranges.push([scalar.range[0], scalar.range[1]]);
  });
  let out = text;
  for (const [start, end] of ranges.sort((a, b) => b[0] - a[0])) {
    const newlines = out.slice(start, end).split('\n').length - 1;
    out = out.slice(0, start) + MASK + '\n'.repeat(newlines) + out.slice(end);
  }
  return runtime.redact(out);
}

function isSecretPath(path: PathSegment[], secretOptions: (provider: string) => readonly string[]): boolean {
  const [section, second, third] = path;
  if (section === 'keys') return path.length === 3 && third === 'key';
  if (section === 'admin') return path.length === 4 && second === 'keys' && path[3] === 'key';
  if (section === 'providers' && typeof second === 'string' && path.length >= 3) {
    const option = String(third);
    return secretOptions(second).includes(option) || SECRET_NAME.test(option) || path.slice(3).some((s) => typeof s === 'string' && SECRET_NAME.test(s));
  }
  return false;
}

/** The config file as it is on disk now, masked. */
export async function maskedConfigFile(runtime: Runtime): Promise<{ file: string; text: string }> {
  const text = await readFile(runtime.files[0], 'utf8');
  return { file: runtime.file, text: maskConfigText(text, runtime) };
}

export interface ValidationResult {
  ok: boolean;
  errors: string[];
  warnings: string[];
  /** When ok: what the edit would serve. */
  summary?: string;
}

/**
 * What `switchyard validate` (and a reload) would say of `text` if it replaced the config file:
 * the same parse, schema, cross-checks and plugin checks, positions against the file's name.
 * The generation built is closed at once; nothing is applied.
 */
export async function validateConfigText(text: string, runtime: Runtime, env: NodeJS.ProcessEnv): Promise<ValidationResult> {
  const parsed = parseConfigText(text, runtime.files[0], env);
  try {
    const built = await buildRuntime(parsed, { generation: 0, log: createLogger({ level: 'silent', format: 'json' }), env });
    await built.close();
    const warnings = built.warnings.map(formatIssue);
    return { ok: true, errors: [], warnings, summary: `${built.models.size} models, ${built.providers.size} providers, ${built.stages.length} stages` };
  } catch (err) {
    if (!(err instanceof ConfigError)) return { ok: false, errors: [runtime.redact(String((err as Error)?.message ?? err))], warnings: [] };
    return {
      ok: false,
      errors: err.issues.filter((i) => i.severity === 'error').map(formatIssue),
      warnings: err.issues.filter((i) => i.severity === 'warning').map(formatIssue),
    };
  }
}
