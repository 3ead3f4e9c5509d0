/**
 * Claude Code through a Vertex AI Claude target: the real `claude -p` (the pinned build in
 * test/agents/node_modules) against the gateway on 127.0.0.1, whose `vertex-anthropic` provider
 * gets its token from the Google emulator (a service account key) and calls a fake Vertex that
 * speaks rawPredict / streamRawPredict and plays the scripted model of the agents suite (its
 * case book and Messages reader, reused as they are). The fake answers with a thinking block
 * signed the way Claude signs, so the case passes only if Claude Code's second turn brings the
 * thinking block back with its signature unchanged; its `cache_control` markers and
 * `anthropic-beta` must arrive as Claude Code sent them, with the Vertex version in the body.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeUpstream, startTestGateway, type RecordedRequest, type ScriptedResponse, type TestGateway } from '../../src/kit/testing/index.ts';
import { googleEmulator, useGoogleEmulator } from '../helpers/google-emulator.ts';
import { explain, runCase, slug } from './case.ts';
import { type AgentClient, cliPath, runCli } from './clients/run.ts';
import { ALIAS, keyFor } from './gateways.ts';
import { CaseBook, type Decision } from './script/model.ts';
import type { ScriptedModel, Turn } from './script/upstream.ts';
import { readMessages } from './script/wire-messages.ts';
import { sse, usage } from './script/wire-util.ts';

const PROJECT = 'switchyard-test';
const LOCATION = 'us-east5';
const VERTEX_MODEL = 'claude-sonnet-4-5@20250929';
/** A signature as Claude gives one; only the fake knows it, so it reaches the upstream again only by round trip. */
const SIGNATURE = `EqMBCkYIBxgCKkB${'vertexClaudeCodeSig'.repeat(4)}==`;
const RAW_PREDICT = new RegExp(`^/v1/projects/${PROJECT}/locations/${LOCATION}/publishers/anthropic/models/([^:/]+):(rawPredict|streamRawPredict)$`);

/**
 * Claude Code as clients/claude-code.ts runs it, with extended thinking on (MAX_THINKING_TOKENS):
 * the same flags and offline environment, one variable more.
 */
const claudeCodeThinking: AgentClient = {
  id: 'claude-code-vertex',
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
      MAX_THINKING_TOKENS: '2048',
    }),
};

const emulator = googleEmulator();
useGoogleEmulator(emulator);
const cases = new CaseBook();
const turns: Turn[] = [];
const bodies: Array<{ headers: RecordedRequest['headers']; body: Record<string, unknown> }> = [];
const upstream = fakeUpstream((req) => vertexClaude(req));
const model: ScriptedModel = { upstream, cases, turns };
let gateway: TestGateway | undefined;

function vertexClaude(req: RecordedRequest): ScriptedResponse {
  const match = RAW_PREDICT.exec(req.url);
  if (!match) return { status: 404, body: { error: { code: 404, message: `no route for ${req.method} ${req.url}`, status: 'NOT_FOUND' } } };
  if (!emulator.valid(/^Bearer (.+)$/.exec(String(req.headers.authorization ?? ''))?.[1])) {
    return { status: 401, body: { error: { code: 401, message: 'Request had invalid authentication credentials.', status: 'UNAUTHENTICATED' } } };
  }
  const body = req.body as Record<string, unknown>;
  if (body.anthropic_version !== 'vertex-2023-10-16' || 'model' in body) {
    return { status: 400, body: { type: 'error', error: { type: 'invalid_request_error', message: 'anthropic_version must be vertex-2023-10-16 and model must not be in the body' } } };
  }
  if (match[1] === 'count-tokens') return { status: 200, body: { input_tokens: 20 } };
  bodies.push({ headers: req.headers, body });
  const view = readMessages(body, req.raw);
  const decision = cases.decide(view);
  turns.push({ wire: 'messages', caseId: cases.find(req.raw)?.id, decision, tools: view.tools.map((t) => t.name), toolResults: view.toolResults });
  const thinking = (body.thinking as { type?: string } | undefined)?.type;
  return answer(decision, decodeURIComponent(match[1]!), match[2] === 'streamRawPredict', thinking === 'enabled' || thinking === 'adaptive');
}

/** The scripted decision as Claude on Vertex answers it, after a signed thinking block when thinking is on. */
function answer(decision: Decision, name: string, stream: boolean, thinking: boolean): ScriptedResponse {
  const id = `msg_vrtx_${Date.now()}_${bodies.length}`;
  const block =
    decision.kind === 'tool'
      ? { type: 'tool_use', id: decision.callId.replace(/^call_/, 'toolu_'), name: decision.tool.name, input: typeof decision.input === 'string' ? { input: decision.input } : decision.input }
      : { type: 'text', text: decision.text };
  const thought = { type: 'thinking', thinking: 'I will do what the user asked.', signature: SIGNATURE };
  const stop = decision.kind === 'tool' ? 'tool_use' : 'end_turn';
  const content = thinking ? [thought, block] : [block];
  const message = { id, type: 'message', role: 'assistant', model: name, content, stop_reason: stop, stop_sequence: null, usage: usage.messages };
  if (!stream) return { status: 200, body: message };
  const ev = (event: string, fields: object) => ({ event, data: { type: event, ...fields } });
  const events = [ev('message_start', { message: { ...message, content: [], stop_reason: null, usage: { ...usage.messages, output_tokens: 1 } } })];
  let index = 0;
  if (thinking) {
    events.push(
      ev('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } }),
      ev('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: thought.thinking } }),
      ev('content_block_delta', { index, delta: { type: 'signature_delta', signature: SIGNATURE } }),
      ev('content_block_stop', { index }),
    );
    index++;
  }
  const opening = block.type === 'tool_use' ? { ...block, input: {} } : { type: 'text', text: '' };
  const delta = block.type === 'tool_use' ? { type: 'input_json_delta', partial_json: JSON.stringify(block.input) } : { type: 'text_delta', text: (block as { text: string }).text };
  events.push(
    ev('content_block_start', { index, content_block: opening }),
    ev('content_block_delta', { index, delta }),
    ev('content_block_stop', { index }),
    ev('message_delta', { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: usage.messages.output_tokens } }),
    ev('message_stop', {}),
  );
  return sse(events);
}

beforeAll(async () => {
  await upstream.start();
  const target = { targets: [{ provider: 'vertex-claude', model: VERTEX_MODEL }] };
  gateway = await startTestGateway({
    keys: [{ name: slug(claudeCodeThinking.id), key: keyFor(slug(claudeCodeThinking.id)), models: ['*'] }],
    providers: {
      'vertex-claude': { plugin: 'vertex-anthropic', project: PROJECT, location: LOCATION, baseUrl: upstream.url, auth: { type: 'google', credentials: JSON.stringify(emulator.serviceAccount()) } },
    },
    models: { [ALIAS]: target, '*': target },
  });
});

afterAll(async () => {
  await gateway?.close();
  await upstream.close();
});

describe('Claude Code through a Vertex AI Claude target (vertex-anthropic)', () => {
  it('writes the file and answers; thinking signatures, cache_control and anthropic-beta reach Vertex unchanged', { timeout: 300_000 }, async () => {
    const outcome = await runCase(claudeCodeThinking, 'anthropic', model, gateway!, ALIAS);
    expect(outcome.problems, explain(outcome, model)).toEqual([]);
    expect(outcome.mode).toBe('pass-through');

    const ours = bodies.filter((b) => cases.find(JSON.stringify(b.body)));
    expect(ours.length, 'the case took at least two model turns (the tool call, then the final text)').toBeGreaterThanOrEqual(2);
    // Thinking was asked for, and the turn after the tool call carries the signed block back as it was.
    expect(ours.some((b) => (b.body.thinking as { type?: string } | undefined)?.type)).toBe(true);
    const sentBack = ours.flatMap((b) => (b.body.messages as Array<{ role: string; content: unknown }>).filter((m) => m.role === 'assistant'));
    const blocks = sentBack.flatMap((m) => (Array.isArray(m.content) ? (m.content as Array<Record<string, unknown>>) : []));
    expect(blocks.filter((b) => b.type === 'thinking').map((b) => b.signature)).toContain(SIGNATURE);
    // Claude Code marks its prompt for caching; the markers reach Vertex.
    expect(ours.some((b) => JSON.stringify(b.body).includes('"cache_control"'))).toBe(true);
    // Its betas are carried as the header it sent (Vertex reads anthropic-beta as Anthropic's API does).
    expect(ours.every((b) => typeof b.headers['anthropic-beta'] === 'string' && b.headers['anthropic-beta'].length > 0)).toBe(true);
    expect(ours.every((b) => b.headers['anthropic-version'] === undefined)).toBe(true);
  });
});
