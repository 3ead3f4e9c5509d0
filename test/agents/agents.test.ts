/**
 * Coding agents and agent SDKs, run as their users run them, against the real gateway on
 * 127.0.0.1 with a scripted model behind it: each client × provider family is one case (see
 * case.ts for what passes). The CLIs are the pinned builds in test/agents/node_modules; the
 * clients run a few at a time (clients/run.ts), every request to loopback.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestGateway } from '../../src/kit/testing/index.ts';
import { explain, type Outcome, runCase, slug } from './case.ts';
import { claudeCode } from './clients/claude-code.ts';
import { codexAlias, codexDefaultModel } from './clients/codex.ts';
import { geminiCli } from './clients/gemini-cli.ts';
import { opencode } from './clients/opencode.ts';
import type { AgentClient } from './clients/run.ts';
import { anthropicToolRunner } from './clients/sdk-anthropic-tool-runner.ts';
import { langchain } from './clients/sdk-langchain.ts';
import { openaiAgents } from './clients/sdk-openai-agents.ts';
import { vercelAi } from './clients/sdk-vercel-ai.ts';
import { ALIAS, FAMILIES, type Family, familiesFor, startGateways } from './gateways.ts';
import { publishMatrix, writeMatrixArtifacts } from './matrix.ts';
import { scriptedModel } from './script/upstream.ts';

const CLIENTS: AgentClient[] = [claudeCode, codexDefaultModel, codexAlias, geminiCli, opencode, openaiAgents, vercelAi, anthropicToolRunner, langchain];
/** Only these, when set (comma-separated client ids): for working on one client. */
const ONLY = process.env.SWITCHYARD_AGENTS_ONLY?.split(',');
/** Only these families, when set (comma-separated: `bedrock,bedrock-messages`). */
const ONLY_FAMILIES = process.env.SWITCHYARD_AGENTS_FAMILIES?.split(',');

const model = scriptedModel();
let gateways: Record<Family, TestGateway> | undefined;
const outcomes: Outcome[] = [];

beforeAll(async () => {
  await model.upstream.start();
  gateways = await startGateways(
    model.upstream.url,
    CLIENTS.map((c) => slug(c.id)),
  );
});

afterAll(async () => {
  await Promise.all(Object.values(gateways ?? {}).map((g) => g.close()));
  await model.upstream.close();
  // Only a whole run speaks for the README's matrix; a partial one still leaves its artifacts.
  const clients = CLIENTS.map((c) => c.id);
  if (outcomes.length === CLIENTS.reduce((n, c) => n + familiesFor(c).length, 0)) {
    const mismatch = publishMatrix(outcomes, clients, FAMILIES);
    if (mismatch) throw new Error(mismatch);
  } else if (outcomes.length) writeMatrixArtifacts(outcomes, clients, FAMILIES);
});

describe.concurrent('coding agents through the gateway', () => {
  for (const client of CLIENTS.filter((c) => !ONLY || ONLY.includes(c.id))) {
    for (const family of familiesFor(client).filter((f) => !ONLY_FAMILIES || ONLY_FAMILIES.includes(f))) {
      it(`${client.id} → ${family}`, { timeout: 420_000 }, async () => {
        const outcome = await runCase(client, family, model, gateways![family], ALIAS);
        outcomes.push(outcome);
        expect(outcome.problems, explain(outcome, model)).toEqual([]);
      });
    }
  }
});
