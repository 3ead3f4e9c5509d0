/**
 * Claude Code, `claude -p`: Anthropic Messages to ANTHROPIC_BASE_URL with the key in
 * ANTHROPIC_API_KEY, its own default model (the gateway's `*` alias serves it), file edits accepted
 * without asking (`--permission-mode acceptEdits`: `--dangerously-skip-permissions` is refused as
 * root), and everything it would fetch besides the model (updates, telemetry, error reports,
 * feedback) switched off so it runs offline.
 */
import { type AgentClient, cliPath, runCli } from './run.ts';

export const claudeCode: AgentClient = {
  id: 'claude-code',
  speaks: 'messages',
  run: (ctx) =>
    runCli(cliPath('claude'), ['-p', ctx.prompt, '--permission-mode', 'acceptEdits', '--output-format', 'text'], ctx, {
      ANTHROPIC_BASE_URL: ctx.gatewayUrl,
      ANTHROPIC_API_KEY: ctx.apiKey,
      CLAUDE_CONFIG_DIR: `${ctx.homeDir}/.claude`,
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_AUTOUPDATER: '1',
      DISABLE_TELEMETRY: '1',
      DISABLE_ERROR_REPORTING: '1',
    }),
};
