/**
 * gateway.yaml → a validated GatewayConfig, or every problem with its file:line:col.
 * Order: YAML syntax → ${VAR} and ${file:...} interpolation → JSON Schema (ajv, unknown fields rejected) →
 * cross-checks between sections. Plugin-level checks happen in the runtime builder.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { Ajv } from 'ajv';
import gatewaySchema from '../../schemas/gateway.schema.json' with { type: 'json' };
import { ConfigSource, type ConfigIssues } from './source.ts';
import { interpolate, unresolvedReason, type UnsetVariable } from './interpolate.ts';
import { SecretFiles } from './secret-files.ts';
import { fingerprintOf } from './fingerprint.ts';
import { makeRedactor, type RedactionIndex } from '../runtime/redact.ts';
import { describeSchemaErrors, closest } from './schema-errors.ts';
import { compileGlob } from './glob.ts';
import { secretsOf, type KeySecret } from './key-secrets.ts';
import type { GatewayConfig, StageRef } from './types.ts';
import type { PathSegment } from './issues.ts';
import { BUILTIN_STAGES, DEFAULT_PIPELINE, builtinStage } from '../pipeline/stages.ts';

const ajv = new Ajv({ allErrors: true, verbose: true, useDefaults: true, strict: true, strictRequired: false });
const validateGateway = ajv.compile<GatewayConfig>(gatewaySchema);

/** Built-ins whose relative order is fixed; custom stages may go anywhere between them. */
const ORDERED_BUILTINS = BUILTIN_STAGES.filter((s) => s.ordered).map((s) => s.name);

/** `source`: the YAML document itself when parsed on this thread, placed issues when parsed by a worker. */
export interface ParsedConfig<Source extends ConfigIssues = ConfigIssues> {
  source: Source;
  /** Present when the schema passed (cross-check errors may still be in source.issues). */
  config?: GatewayConfig;
  configDir: string;
  /** Providers that cannot serve because their options reference unset variables or unreadable files → reason. */
  unavailable: Map<string, string>;
  /**
   * Every file this parse read (the config file, each `${file:...}`, readable or not) → its
   * fingerprint: what a watcher compares against, so that only a real change reloads.
   */
  inputs: ReadonlyMap<string, string>;
  /** Values read with `${file:...}`: secrets, scrubbed like every configured key. */
  fileSecrets: readonly string[];
  /** The secrets of each `keys:` entry (digests computed once, by the cross-checks), by index. */
  keySecrets?: readonly (readonly KeySecret[])[];
  /** Each key entry's JSON, by index, when already computed (by a reload's worker thread): what the reload's diff compares. */
  keyJson?: readonly string[];
  /** What to redact of `fileSecrets` and the keys' plain secrets, when already built (by a reload's worker thread). */
  redaction?: RedactionIndex;
}

/** Where a config file is shown in messages: relative to the working directory when inside it. */
export function displayName(file: string): string {
  const rel = path.relative(process.cwd(), file);
  return rel && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : file;
}

export async function parseConfigFile(file: string, env: NodeJS.ProcessEnv = process.env): Promise<ParsedConfig<ConfigSource>> {
  const absolute = path.resolve(file);
  // Bytes first: the fingerprint is of what is on disk, as the watcher reads it.
  const bytes = await readFile(absolute);
  return parseConfigText(bytes.toString('utf8'), absolute, env, fingerprintOf(bytes));
}

/** `fingerprint`: of the bytes `text` came from, when it came from the file (not from an edit being checked). */
export function parseConfigText(text: string, absoluteFile: string, env: NodeJS.ProcessEnv = process.env, fingerprint?: string): ParsedConfig<ConfigSource> {
  const source = new ConfigSource(displayName(absoluteFile), text);
  // Not the real path: relative `${file:...}` paths and `state.file` resolve beside the name the
  // gateway was given (for a Kubernetes mount, the mount, not the timestamped folder behind it).
  const configDir = path.dirname(absoluteFile);
  const unavailable = new Map<string, string>();
  const files = new SecretFiles(configDir);
  let keySecrets: KeySecret[][] | undefined;
  const result = (config?: GatewayConfig): ParsedConfig<ConfigSource> => ({
    source,
    config,
    configDir,
    unavailable,
    inputs: new Map([...(fingerprint ? [[absoluteFile, fingerprint] as const] : []), ...files.fingerprints]),
    fileSecrets: [...files.values],
    keySecrets,
  });
  if (source.hasErrors) return result();

  const unset = interpolate(source, env, files);
  source.scrub = makeRedactor(files.values);
  for (const u of unset) reportUnset(source, u, unavailable);

  let data: unknown;
  try {
    data = source.doc.toJS();
  } catch (err) {
    // Aliases are checked when the text is read; this is the library's last word (e.g. too many aliases).
    source.error([], `the YAML cannot be read: ${(err as Error).message}`);
    return result();
  }
  if (!data || typeof data !== 'object' || Array.isArray(data)) {
    source.error([], 'the file must be a mapping with at least "providers" and "models"');
    return result();
  }
  const valid = validateGateway(data);
  (data as Partial<GatewayConfig>).pipeline ??= [...DEFAULT_PIPELINE];
  if (!valid) for (const f of describeSchemaErrors(validateGateway.errors ?? [], data)) source.error(f.path, f.message, { key: f.key });
  // Cross-checks run even after schema errors (tolerating odd shapes) so one run reports all.
  keySecrets = crossCheck(source, data as Partial<GatewayConfig>);
  return result(valid ? (data as GatewayConfig) : undefined);
}

function reportUnset(source: ConfigSource, u: UnsetVariable, unavailable: Map<string, string>): void {
  const [section, provider] = u.path;
  const at = { line: u.line, col: u.col };
  if (section === 'providers' && typeof provider === 'string') {
    // A provider whose secret is not in the environment (or its file) must not stop a fresh clone
    // from starting: it is reported here and its models answer 503 until the secret is there.
    const reason = `${unresolvedReason(u)} (${source.file}:${u.line}:${u.col})`;
    if (!unavailable.has(provider)) unavailable.set(provider, reason);
    const until = u.file ? 'the file can be read (a change to it reloads)' : 'it is';
    source.issue('warning', u.path, `${unresolvedReason(u)}: provider "${provider}" is unavailable until ${until}`, { at });
    return;
  }
  if (u.file) source.issue('error', u.path, `${unresolvedReason(u)}: check the path (relative paths start from the config file's folder) and that the gateway may read it`, { at });
  else source.issue('error', u.path, `environment variable ${u.name} is not set and has no default (write \${${u.name}:-default} to give one)`, { at });
}

const isObject = (v: unknown): v is Record<string, unknown> => Boolean(v) && typeof v === 'object' && !Array.isArray(v);
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** Returns the secrets of each key entry, which it had to compute anyway. */
function crossCheck(source: ConfigSource, config: Partial<GatewayConfig>): KeySecret[][] {
  const providers = isObject(config.providers) ? config.providers : {};
  const models = isObject(config.models) ? config.models : {};
  const providerNames = Object.keys(providers);
  const modelNames = Object.keys(models);

  for (const [alias, model] of Object.entries(models)) {
    for (const kind of ['contextWindow', 'contentPolicy']) {
      list(isObject(model) && isObject(model.fallbacks) ? (model.fallbacks as Record<string, unknown>)[kind] : undefined).forEach((name, i) => {
        if (typeof name !== 'string' || models[name]) return;
        const hint = closest(name, modelNames);
        source.error(['models', alias, 'fallbacks', kind, i], `unknown model "${name}"${hint ? ` (did you mean "${hint}"?)` : ''}`);
      });
    }
    list(isObject(model) ? model.targets : undefined).forEach((t, i) => {
      // A provider written with an empty value is already an error of its own.
      if (!isObject(t) || typeof t.provider !== 'string' || Object.hasOwn(providers, t.provider)) return;
      const hint = closest(t.provider, providerNames);
      source.error(['models', alias, 'targets', i, 'provider'], `unknown provider "${t.provider}"${hint ? ` (did you mean "${hint}"?)` : ''} (known: ${providerNames.join(', ') || 'none'})`);
    });
  }

  const keys = list(config.keys).filter(isObject);
  const teamNames = Object.keys(isObject(config.teams) ? config.teams : {});
  keys.forEach((k, i) => {
    if (typeof k.team !== 'string' || teamNames.includes(k.team)) return;
    const hint = closest(k.team, teamNames);
    source.error(['keys', i, 'team'], `unknown team "${k.team}"${hint ? ` (did you mean "${hint}"?)` : ''} (teams: ${teamNames.join(', ') || 'none'})`);
  });
  // Secrets compared by digest, so `key: x` and `keyHash: sha256(x)` are the same secret.
  const secretsByKey = keys.map((k, i) => secretsOf(k, ['keys', i]));
  const clientDigests = new Set(secretsByKey.flat().map((s) => s.digest));
  list(isObject(config.admin) ? config.admin.keys : undefined).forEach((k, i) => {
    const [secret] = secretsOf(k, ['admin', 'keys', i]);
    if (secret && clientDigests.has(secret.digest)) source.error(secret.path, 'an admin key must differ from every client key');
  });
  const names = new Map<string, number>();
  const owners = new Map<string, number>();
  keys.forEach((k, i) => {
    if (typeof k.name === 'string') {
      if (names.has(k.name)) source.error(['keys', i, 'name'], `duplicate key name "${k.name}" (also keys[${names.get(k.name)}])`);
      else names.set(k.name, i);
    }
    for (const secret of secretsByKey[i]) {
      const owner = owners.get(secret.digest);
      if (owner === i) source.error(secret.path, 'this secret appears twice in this key: remove one of them');
      else if (owner !== undefined) source.error(secret.path, `the same secret as keys[${owner}] ("${keys[owner].name}"): each secret may belong to one key only`);
      else owners.set(secret.digest, i);
    }
    list(k.models).forEach((glob, j) => {
      if (typeof glob !== 'string' || modelNames.length === 0) return;
      const re = compileGlob(glob);
      if (!modelNames.some((m) => re.test(m))) source.error(['keys', i, 'models', j], `"${glob}" matches no model (models: ${modelNames.join(', ')})`);
    });
  });

  // `keys:` written as something other than a list is an error of its own, not "no keys".
  const keyCount = config.keys === undefined || Array.isArray(config.keys) ? keys.length : undefined;
  if (Array.isArray(config.pipeline)) checkPipeline(source, config.pipeline, keyCount);
  return secretsByKey;
}

function stageName(ref: unknown): string | undefined {
  if (typeof ref === 'string') return ref;
  return isObject(ref) && typeof ref.stage === 'string' ? ref.stage : undefined;
}

function checkPipeline(source: ConfigSource, pipeline: StageRef[], keyCount: number | undefined): void {
  const seen = new Map<string, number>();
  let lastOrdered = -1;
  let lastOrderedName = '';
  pipeline.forEach((ref, i) => {
    const name = stageName(ref);
    if (name === undefined) return;
    const at: PathSegment[] = ['pipeline', i];
    const order = ORDERED_BUILTINS.indexOf(name);
    // Built-ins run once; a custom stage may appear twice with different options.
    if (seen.has(name) && builtinStage(name)) {
      source.error(at, `stage "${name}" appears twice (also pipeline[${seen.get(name)}])`);
      return;
    }
    seen.set(name, i);
    if (order === -1) return;
    if (order < lastOrdered) source.error(at, `"${name}" must come before "${lastOrderedName}" (built-in order: ${ORDERED_BUILTINS.join(' → ')})`);
    else {
      lastOrdered = order;
      lastOrderedName = name;
    }
  });
  for (const stage of BUILTIN_STAGES) {
    if (stage.required && !seen.has(stage.name)) source.error(['pipeline'], `the pipeline needs the "${stage.name}" stage`);
  }
  for (const stage of BUILTIN_STAGES) {
    if (stage.needsKeys && seen.has(stage.name) && keyCount === 0) {
      source.error(['keys'], `the pipeline has the "${stage.name}" stage but no keys are defined, so every request would be refused; add a key or remove "${stage.name}"`);
    }
  }
}
