/**
 * switchyard [--config FILE] [--port N] [--host H]   serve
 * switchyard validate [FILE]                          check a config: exit 0, or 1 with every error on stderr
 */
import { parseArgs } from 'node:util';
import { Gateway } from './gateway.ts';
import { ConfigError, formatIssue } from './config/issues.ts';
import { parseConfigFile } from './config/load.ts';
import { buildRuntime } from './runtime/build.ts';
import { createLogger } from './logger.ts';
import path from 'node:path';
import { scaffoldPlugin } from './scaffold/new-plugin.ts';

const USAGE = `Usage:
  switchyard [--config FILE] [--port N] [--host H] [--no-watch]
                                                      serve the gateway (default config ./gateway.yaml);
                                                      reloads on file changes (unless --no-watch) and on SIGHUP
  switchyard validate [FILE]                          check a config file (default ./gateway.yaml)
  switchyard plugin new provider|stage NAME [--dir DIR]
                                                      scaffold a plugin folder (default ./plugins/NAME) with a passing test
  switchyard --help`;

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
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const [command, ...rest] = positionals;
  if (command === 'validate') return validate(rest[0] ?? values.config ?? 'gateway.yaml');
  if (command === 'plugin') return newPlugin(rest, values.dir);
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
    process.stdout.write(`created ${files.map((f) => path.relative(process.cwd(), f)).join(', ')}\n\nnext:\n  npx vitest run ${folder}        # the plugin's own offline test\n  then name it in gateway.yaml: ${kind === 'provider' ? `providers: { ${name}: { plugin: ./${folder}, baseUrl: ... } }` : `pipeline: [auth, validate, { stage: ./${folder}, options: { tag: x } }, route, retry, transform-response, log]`}\n`);
    return 0;
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    return 1;
  }
}

async function validate(file: string): Promise<number> {
  try {
    const parsed = await parseConfigFile(file);
    const runtime = await buildRuntime(parsed, { generation: 0, log: createLogger({ level: 'silent', format: 'json' }) });
    for (const w of runtime.warnings) process.stderr.write(`${formatIssue(w)}\n`);
    await runtime.close();
    process.stdout.write(`${runtime.file}: OK (${runtime.models.size} models, ${runtime.providers.size} providers, ${runtime.stages.length} stages)\n`);
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
  let gateway: Gateway;
  try {
    gateway = await Gateway.start({ config: file, port: portNumber, host, watch });
  } catch (err) {
    return reportFailure(err, file);
  }
  const runtime = gateway.runtime;
  const models = [...runtime.models.values()].map((m) => `${m.name} → ${m.targets.map((t) => `${t.provider}/${t.model}${t.unavailable ? ' (unavailable)' : ''}`).join(', ')}`);
  const base = `${gateway.url}/v1`;
  const demo = [...runtime.models.keys()][0];
  gateway.log.info(
    { url: base, models: [...runtime.models.keys()], config: runtime.file },
    `Switchyard listening on ${base}\n  models:\n    ${models.join('\n    ')}\n  try:\n    curl ${base}/chat/completions -H "Authorization: Bearer <a key from ${runtime.file}>" -H "Content-Type: application/json" -d '{"model":"${demo}","messages":[{"role":"user","content":"Hello"}]}'`,
  );
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

function reportFailure(err: unknown, file: string): number {
  if (err instanceof ConfigError) {
    for (const issue of err.issues) process.stderr.write(`${formatIssue(issue)}\n`);
    const count = err.issues.filter((i) => i.severity === 'error').length;
    process.stderr.write(`${count} error${count === 1 ? '' : 's'}: the configuration was not loaded\n`);
    return 1;
  }
  const code = (err as NodeJS.ErrnoException)?.code;
  if (code === 'ENOENT') process.stderr.write(`${file}: no such file\n`);
  else if (code === 'EADDRINUSE') process.stderr.write(`cannot listen: ${(err as Error).message} (another process uses the port; try --port 0)\n`);
  else process.stderr.write(`${(err as Error)?.stack ?? String(err)}\n`);
  return 1;
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
