/**
 * opencode, `opencode run`: a provider on its bundled `@ai-sdk/openai-compatible` (chat
 * completions) at the gateway, given as OPENCODE_CONFIG_CONTENT, edits and shell allowed, and
 * its downloads (models list, LSP servers, plugins, updates, sharing) switched off; the npm
 * look-up it still makes at start meets the offline proxy of run.ts.
 */
import { type AgentClient, cliPath, runCli } from './run.ts';

/** opencode.json as the README shows it. */
export function opencodeConfig(baseUrl: string, apiKey: string, alias: string): Record<string, unknown> {
  return {
    provider: {
      switchyard: { npm: '@ai-sdk/openai-compatible', name: 'Switchyard', options: { baseURL: `${baseUrl}/v1`, apiKey }, models: { [alias]: { name: alias, tool_call: true } } },
    },
    model: `switchyard/${alias}`,
    autoupdate: false,
    share: 'disabled',
    permission: { edit: 'allow', bash: 'allow' },
  };
}

export const opencode: AgentClient = {
  id: 'opencode',
  speaks: 'chat',
  run: (ctx) =>
    runCli(cliPath('opencode'), ['run', ctx.prompt], ctx, {
      OPENCODE_CONFIG_CONTENT: JSON.stringify(opencodeConfig(ctx.gatewayUrl, ctx.apiKey, ctx.alias)),
      OPENCODE_DISABLE_MODELS_FETCH: '1',
      OPENCODE_DISABLE_AUTOUPDATE: '1',
      OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
      OPENCODE_DISABLE_DEFAULT_PLUGINS: '1',
      OPENCODE_DISABLE_SHARE: '1',
      OPENCODE_DISABLE_CLAUDE_CODE: '1',
      OPENCODE_DISABLE_EXTERNAL_SKILLS: '1',
      OPENCODE_PURE: '1',
    }),
};
