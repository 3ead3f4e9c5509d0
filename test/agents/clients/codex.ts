/**
 * Codex CLI, `codex exec`: a `model_providers.switchyard` entry (wire_api "responses") in a
 * config.toml of its own CODEX_HOME, the key from the variable `env_key` names. Two runs: its
 * default model (which turns on "code mode": one freeform `exec` tool in an `additional_tools`
 * input item) and a plain alias (function tools: `exec_command`...). No sandbox (the bundled
 * bubblewrap needs namespaces a CI container may not have) and no approvals, so writes go through.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { type AgentClient, type ClientContext, cliPath, runCli } from './run.ts';

/** The config.toml the README shows, pointed at the test gateway. */
export function codexConfig(baseUrl: string): string {
  return [
    'model_provider = "switchyard"',
    'check_for_update_on_startup = false',
    '',
    '[model_providers.switchyard]',
    'name = "Switchyard"',
    `base_url = "${baseUrl}/v1"`,
    'env_key = "SWITCHYARD_API_KEY"',
    'wire_api = "responses"',
    // A refused request is the answer under test: no retries to wait through.
    'request_max_retries = 0',
    'stream_max_retries = 0',
    '',
    '[analytics]',
    'enabled = false',
    '',
  ].join('\n');
}

function runCodex(ctx: ClientContext, model: string[]) {
  const codexHome = path.join(ctx.homeDir, '.codex');
  mkdirSync(codexHome, { recursive: true });
  writeFileSync(path.join(codexHome, 'config.toml'), codexConfig(ctx.gatewayUrl));
  return runCli(cliPath('codex'), ['exec', '--skip-git-repo-check', '--sandbox', 'danger-full-access', '--color', 'never', ...model, ctx.prompt], ctx, {
    CODEX_HOME: codexHome,
    SWITCHYARD_API_KEY: ctx.apiKey,
  });
}

export const codexDefaultModel: AgentClient = { id: 'codex', speaks: 'responses', run: (ctx) => runCodex(ctx, []) };
export const codexAlias: AgentClient = { id: 'codex (-m alias)', speaks: 'responses', run: (ctx) => runCodex(ctx, ['-m', ctx.alias]) };
