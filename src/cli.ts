/**
 * switchyard [serve] [--config FILE] [--port N] [--host H]   serve
 * switchyard validate [FILE] [--strict]                       check a config: exit 0, or 1 with every error on stderr
 * switchyard plugin new provider|stage NAME [--dir DIR]       scaffold a plugin
 * switchyard usage [--url U] [--admin-key K] [--days N] [--by key|team|model] [--request ID]
 *                                                             a running gateway's usage, spend and quotas (admin API)
 * switchyard key new                                          a fresh client key and its keyHash line
 * (`--version` is answered by bin/switchyard.mjs, which knows where package.json is.)
 */
import cluster from 'node:cluster';
import { parseArgs } from 'node:util';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Gateway } from './gateway.ts';
import { ConfigError, formatIssue } from './config/issues.ts';
import { parseConfigFile } from './config/load.ts';
import { buildRuntime } from './runtime/build.ts';
import { checkIdentities, type IdentityCheck } from './runtime/identity-check.ts';
import { createLogger } from './logger.ts';
import { startupBanner } from './startup-banner.ts';
import { ClusterWorker } from './cluster/worker.ts';
import { runPrimary } from './cluster/primary.ts';
import { workerCount } from './cluster/workers.ts';
import path from 'node:path';
import { scaffoldPlugin } from './scaffold/new-plugin.ts';
import { usageReport, UsageCommandError, type UsageGrouping } from './admin/usage-table.ts';
import { freshKey } from './runtime/keys.ts';
import { checkRedisPersistence } from './governance/redis-persistence.ts';

const USAGE = `Usage:
  switchyard [serve] [--config FILE] [--port N] [--host H] [--no-watch]
                                                      serve the gateway (default config ./gateway.yaml);
                                                      reloads on file changes (unless --no-watch) and on SIGHUP
  switchyard validate [FILE] [--strict]               check a config file (default ./gateway.yaml); --strict also
                                                      fails when a provider would be unavailable (an unset variable)
                                                      and warns when the state backend's Redis does not persist
  switchyard plugin new provider|stage NAME [--dir DIR]
                                                      scaffold a plugin folder (default ./plugins/NAME) with a passing test
  switchyard usage [--url URL] [--admin-key KEY] [--days N] [--by key|team|model] [--request ID]
                                                      a running gateway's requests, tokens and cost per UTC day
                                                      (default: the last 7 days by key) and each key's or team's
                                                      limits, quota left and budget, read from its admin API
                                                      (default URL http://127.0.0.1:8080; the key defaults to
                                                      $SWITCHYARD_ADMIN_KEY, one of admin.keys); --request: one
                                                      request as the request ledger booked it
  switchyard key new                                  print a fresh random client key and its keyHash line for
                                                      gateway.yaml (to rotate a key: add it first in the entry's
                                                      key/keyHash list, or move the old one under previous)
  switchyard --version                                print the version
  switchyard --help                                   print this text`;

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    allowNegative: true,
    options: {
      config: { type: 'string', short: 'c' },
      port: { type: 'string', short: 'p' },
      host: { type: 'string', short: 'H' },
      watch: { type: 'boolean', default: true },
      dir: { type: 'string' },
      strict: { type: 'boolean', default: false },
      url: { type: 'string' },
      'admin-key': { type: 'string' },
      days: { type: 'string' },
      by: { type: 'string' },
      request: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const [command, ...rest] = positionals;
  if (command === 'validate') return validate(rest[0] ?? values.config ?? 'gateway.yaml', values.strict === true);
  if (command === 'plugin') return newPlugin(rest, values.dir);
  if (command === 'usage') return usage(values);
  if (command === 'key') return newKey(rest);
  if (command !== undefined && command !== 'serve') {
    process.stderr.write(`unknown command "${command}"\n${USAGE}\n`);
    return 2;
  }
  return serve(values.config ?? 'gateway.yaml', values.port, values.host, values.watch !== false);
}

function newPlugin(args: string[], dir: string | undefined): number {
  const [verb, kind, name] = args;
  if (verb !== 'new' || !kind || !name) {
    process.stderr.write(`usage: switchyard plugin new provider|stage NAME [--dir DIR]\n`);
    return 2;
  }
  try {
    const files = scaffoldPlugin(kind, name, dir);
    const folder = path.relative(process.cwd(), path.dirname(files[0])) || '.';
    process.stdout.write(
      `created ${files.map((f) => path.relative(process.cwd(), f)).join(', ')}\n\nnext:\n  npx vitest run ${folder}        # the plugin's own offline test\n  then name it in gateway.yaml: ${kind === 'provider' ? `providers: { ${name}: { plugin: ./${folder}, baseUrl: ... } }` : `pipeline: [auth, validate, { stage: ./${folder}, options: { tag: x } }, route, retry, transform-response, log]`}\n`,
    );
    return 0;
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    return 1;
  }
}

/** `switchyard key new`: the secret for the client, and the line that lets gateway.yaml hold only its hash. */
function newKey(args: string[]): number {
  if (args.length !== 1 || args[0] !== 'new') {
    process.stderr.write('usage: switchyard key new\n');
    return 2;
  }
  const { key, keyHash } = freshKey();
  process.stdout.write(
    `# The new key: give it to its client (it is not stored anywhere; lost, make another).\nkey: ${key}\n# For its entry under keys: in gateway.yaml (rotating: keyHash: [new, old], or keep the old one under previous: with an until).\nkeyHash: ${keyHash}\n`,
  );
  return 0;
}

/** Reads the admin API of a running gateway; exit 2 for a usage mistake, 1 when the gateway cannot answer. */
async function usage(values: { url?: string; 'admin-key'?: string; days?: string; by?: string; request?: string }): Promise<number> {
  const adminKey = values['admin-key'] ?? process.env.SWITCHYARD_ADMIN_KEY;
  const days = Number(values.days ?? 7);
  const by = values.by ?? 'key';
  const mistake = (message: string): number => {
    process.stderr.write(`${message}\n`);
    return 2;
  };
  if (!adminKey) return mistake('switchyard usage needs an admin key (one of admin.keys in gateway.yaml): set SWITCHYARD_ADMIN_KEY or pass --admin-key');
  if (!(Number.isInteger(days) && days >= 1 && days <= 366)) return mistake(`--days must be a whole number from 1 to 366 (got "${values.days}")`);
  if (!['key', 'team', 'model'].includes(by)) return mistake(`--by must be key, team or model (got "${by}")`);
  try {
    process.stdout.write(await usageReport({ url: values.url ?? process.env.SWITCHYARD_URL ?? 'http://127.0.0.1:8080', adminKey, days, by: by as UsageGrouping, request: values.request }));
    return 0;
  } catch (err) {
    if (!(err instanceof UsageCommandError)) throw err;
    process.stderr.write(`${err.message}\n`);
    return 1;
  }
}

/**
 * `strict`: a provider left unavailable (an unset variable) fails the check, to gate a deploy,
 * and every provider's credentials are resolved once: which source each used, or why none worked.
 */
async function validate(file: string, strict: boolean): Promise<number> {
  try {
    const parsed = await parseConfigFile(file);
    const runtime = await buildRuntime(parsed, { generation: 0, log: createLogger({ level: 'silent', format: 'json' }) });
    for (const w of runtime.warnings) process.stderr.write(`${formatIssue(w)}\n`);
    let identities: IdentityCheck[] = [];
    try {
      if (strict) identities = await checkIdentities(runtime.providers.values(), runtime.redact);
    } finally {
      await runtime.close();
    }
    const credentials = identities.map((c) => `  provider ${c.provider}: ${c.said}\n`).join('');
    const unavailable = [...runtime.providers].filter(([, handle]) => handle.unavailable).map(([name]) => name);
    if (strict && unavailable.length > 0) {
      process.stderr.write(`${credentials}${runtime.file}: --strict: ${unavailable.length === 1 ? 'provider' : 'providers'} ${unavailable.join(', ')} would be unavailable (see the warnings above)\n`);
      return 1;
    }
    const redis = parsed.config?.state.backend === 'redis' ? parsed.config.state.redis : undefined;
    if (strict && redis) {
      // A warning, not a failure: a development Redis need not persist.
      const { warning, unreachable } = await checkRedisPersistence(redis.url);
      if (warning) process.stderr.write(`${runtime.file}: warning: state.redis: ${warning}\n`);
      if (unreachable) process.stderr.write(`${runtime.file}: warning: state.redis: not reachable (${unreachable}); its persistence was not checked\n`);
    }
    const failed = identities.filter((c) => !c.ok).map((c) => c.provider);
    if (failed.length > 0) {
      process.stderr.write(`${credentials}${runtime.file}: --strict: no credentials for ${failed.length === 1 ? 'provider' : 'providers'} ${failed.join(', ')}\n`);
      return 1;
    }
    process.stdout.write(`${runtime.file}: OK (${runtime.models.size} models, ${runtime.providers.size} providers, ${runtime.stages.length} stages)\n${credentials}`);
    return 0;
  } catch (err) {
    return reportFailure(err, file);
  }
}

async function serve(file: string, port: string | undefined, host: string | undefined, watch: boolean): Promise<number> {
  const portNumber = port === undefined ? undefined : Number(port);
  if (portNumber !== undefined && !(Number.isInteger(portNumber) && portNumber >= 0 && portNumber <= 65535)) {
    process.stderr.write(`--port must be a whole number from 0 to 65535 (got "${port}")\n`);
    return 2;
  }
  if (cluster.isWorker) return serveAsWorker(file, portNumber, host);
  const workers = await clusterSettings(file);
  if (workers) return (await runPrimary({ ...workers, watch })) ? -1 : 1;
  let gateway: Gateway;
  try {
    gateway = await Gateway.start({ config: file, port: portNumber, host, watch });
  } catch (err) {
    return reportFailure(err, file);
  }
  const banner = startupBanner(gateway);
  gateway.log.info(banner.fields, `${banner.headline}${banner.details}`);
  const stop = (signal: string) => {
    gateway.log.info({ signal }, 'shutting down: finishing in-flight requests');
    const exit = (code: number) => gateway.log.flush(() => process.exit(code));
    gateway.close().then(
      () => exit(0),
      () => exit(1),
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  process.on('SIGHUP', () => void gateway.reload('SIGHUP'));
  return -1; // keep running
}

/**
 * With `server.workers` above 1, what the cluster primary needs from the file; undefined to serve
 * from this process alone (also when the file has errors: the lone start reports them as usual).
 */
async function clusterSettings(file: string) {
  const parsed = await parseConfigFile(file).catch(() => undefined);
  if (!parsed?.config || parsed.source.hasErrors) return undefined;
  const workers = workerCount(parsed.config.server.workers);
  if (workers <= 1) return undefined;
  return { workers, config: parsed.config, configDir: parsed.configDir, log: createLogger(parsed.config.log) };
}

/** A cluster worker: the primary watches the files and relays signals (src/cluster). */
async function serveAsWorker(file: string, port: number | undefined, host: string | undefined): Promise<number> {
  const worker = new ClusterWorker();
  try {
    worker.started(await Gateway.start({ config: file, port, host, ...(await worker.gatewayOptions(file)) }));
  } catch (err) {
    // The IPC channel would keep this process alive: exit now, the primary reports it.
    process.exit(reportFailure(err, file));
  }
  return -1;
}

function reportFailure(err: unknown, file: string): number {
  if (err instanceof ConfigError) {
    for (const issue of err.issues) process.stderr.write(`${formatIssue(issue)}\n`);
    const count = err.issues.filter((i) => i.severity === 'error').length;
    process.stderr.write(`${count} error${count === 1 ? '' : 's'}: the configuration was not loaded\n`);
    return 1;
  }
  const code = (err as NodeJS.ErrnoException)?.code;
  if (code === 'ENOENT') process.stderr.write(`${file}: no such file${exampleHint(file)}\n`);
  else if (code === 'EADDRINUSE') process.stderr.write(`cannot listen: ${(err as Error).message} (another process uses the port; try --port 0)\n`);
  else process.stderr.write(`${(err as Error)?.stack ?? String(err)}\n`);
  return 1;
}

/** For a missing ./gateway.yaml: where the package's example is (npx users start without one). */
function exampleHint(file: string): string {
  if (path.resolve(file) !== path.resolve('gateway.yaml')) return '';
  const example = fileURLToPath(new URL('gateway.yaml', import.meta.resolve('switchyard-gateway/package.json')));
  return existsSync(example) ? ` (start from the example: cp ${example} .)` : '';
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`${(err as Error)?.message ?? String(err)}\n${USAGE}\n`);
    process.exitCode = 2;
  },
);
