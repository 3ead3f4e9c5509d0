/**
 * Gemini CLI, `gemini -p`: generateContent / streamGenerateContent to GOOGLE_GEMINI_BASE_URL with
 * the key in GEMINI_API_KEY, its own default model, tools approved (`--yolo`, which needs a trusted
 * folder: GEMINI_CLI_TRUST_WORKSPACE), and a settings.json choosing API-key auth with telemetry,
 * usage statistics and update checks off, so it runs offline.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { type AgentClient, cliPath, runCli } from './run.ts';

/** ~/.gemini/settings.json as the README shows it. */
export const GEMINI_SETTINGS = {
  security: { auth: { selectedType: 'gemini-api-key' } },
  telemetry: { enabled: false },
  privacy: { usageStatisticsEnabled: false },
  general: { disableAutoUpdate: true, disableUpdateNag: true },
};

export const geminiCli: AgentClient = {
  id: 'gemini-cli',
  speaks: 'gemini',
  run: (ctx) => {
    mkdirSync(path.join(ctx.homeDir, '.gemini'), { recursive: true });
    writeFileSync(path.join(ctx.homeDir, '.gemini', 'settings.json'), JSON.stringify(GEMINI_SETTINGS));
    return runCli(cliPath('gemini'), ['-p', ctx.prompt, '--yolo'], ctx, {
      GOOGLE_GEMINI_BASE_URL: ctx.gatewayUrl,
      GEMINI_API_KEY: ctx.apiKey,
      GEMINI_CLI_TRUST_WORKSPACE: 'true',
    });
  },
};
