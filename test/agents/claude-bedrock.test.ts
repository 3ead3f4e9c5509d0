/**
 * Claude Code through a Bedrock Claude target in Anthropic's Messages body (`api: messages`):
 * the real `claude -p` (pinned in test/agents, run by the harness's runner) talks to the gateway,
 * which passes its Messages requests through to a loopback Bedrock (InvokeModel with response
 * stream, SigV4 checked against the keys it knows). The fake plays a two-turn model: turn 1
 * thinks (a signed thinking block) and writes a file with the Write tool; turn 2 must carry the
 * thinking block back with its signature byte for byte, and Claude Code's cache_control marks
 * must arrive as it set them.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeUpstream, startTestGateway, type FakeUpstream, type RecordedRequest, type ScriptedResponse, type TestGateway } from '../../src/kit/testing/index.ts';
import { invokeStreamAnswer } from '../helpers/aws-emulator.ts';
import { signedByAws } from '../helpers/sigv4.ts';
import { cliPath, runCli, tempDir, type ClientContext } from './clients/run.ts';

const KEYS = { accessKeyId: 'AKIDCLAUDECODE0001', secretAccessKey: 'claude-code-bedrock-secret-0123456789' };
const MODEL = 'us.anthropic.claude-sonnet-4-5-20250929-v1:0';
const SIGNATURE = 'EqMBCkgIBhABGAIiQKb3drock-turn-1-signature==';
const KEY = 'sk-switchyard-claude-bedrock-0123456789';

// biome-ignore lint/suspicious/noExplicitAny: Messages bodies as the fake received them
type Body = any;
const turns: Body[] = [];
const unsigned: string[] = [];
let bedrock: FakeUpstream;
let t: TestGateway;
let workDir: string;

/** The model: think and write the file when offered the Write tool, then say done once it ran. */
async function playModel(req: RecordedRequest): Promise<ScriptedResponse> {
  if (!(await signedByAws(req, KEYS))) {
    unsigned.push(req.url);
    return { status: 403, headers: { 'x-amzn-errortype': 'UnrecognizedClientException' }, body: { message: 'The security token included in the request is invalid.' } };
  }
  const body: Body = req.body;
  const usage = { input_tokens: 30, output_tokens: 12, cache_read_input_tokens: 200, cache_creation_input_tokens: 50 };
  const message = (content: Array<Record<string, unknown>>, stop: string) => ({
    id: `msg_cc_${turns.length}`,
    type: 'message',
    role: 'assistant',
    model: 'claude-sonnet-4-5',
    content,
    stop_reason: stop,
    stop_sequence: null,
    usage,
  });
  const offersWrite = Array.isArray(body.tools) && body.tools.some((tool: Body) => tool.name === 'Write');
  const last = body.messages?.at(-1);
  const toolResult = Array.isArray(last?.content) && last.content.some((b: Body) => b.type === 'tool_result');
  let answer: ReturnType<typeof message>;
  if (offersWrite && !toolResult) {
    turns.push(body);
    answer = message(
      [
        { type: 'thinking', thinking: 'I should write the file.', signature: SIGNATURE },
        { type: 'tool_use', id: 'toolu_bdrk_01', name: 'Write', input: { file_path: path.join(workDir, 'hello.txt'), content: 'hello from bedrock\n' } },
      ],
      'tool_use',
    );
  } else if (offersWrite) {
    turns.push(body);
    answer = message([{ type: 'text', text: 'Wrote hello.txt.' }], 'end_turn');
  } else {
    // Claude Code's side requests (a title, a summary): plain text.
    answer = message([{ type: 'text', text: 'ok' }], 'end_turn');
  }
  return req.url.endsWith('/invoke-with-response-stream') ? invokeStreamAnswer(answer) : { status: 200, body: answer };
}

beforeAll(async () => {
  bedrock = await startFakeUpstream(playModel);
  workDir = tempDir('claude-bedrock');
  t = await startTestGateway({
    keys: [{ name: 'claude-code', key: KEY, models: ['*'] }],
    providers: { bedrock: { plugin: 'bedrock', region: 'us-east-1', endpoint: bedrock.url, api: 'messages', auth: { type: 'aws-keys', ...KEYS } } },
    models: { '*': { targets: [{ provider: 'bedrock', model: MODEL }] } },
  });
});
afterAll(async () => {
  await t?.close();
  await bedrock?.close();
});

describe('Claude Code through Bedrock (Messages body, pass-through)', () => {
  it('writes the file; turn 2 carries turn 1’s thinking signature back, and cache_control arrives as Claude Code set it', async () => {
    const ctx = { gatewayUrl: t.url, apiKey: KEY, alias: 'agent', prompt: 'Create hello.txt containing "hello from bedrock".', workDir, homeDir: tempDir('claude-bedrock-home') } as ClientContext;
    const run = await runCli(cliPath('claude'), ['-p', ctx.prompt, '--permission-mode', 'acceptEdits', '--output-format', 'text'], ctx, {
      ANTHROPIC_BASE_URL: ctx.gatewayUrl,
      ANTHROPIC_API_KEY: ctx.apiKey,
      CLAUDE_CONFIG_DIR: `${ctx.homeDir}/.claude`,
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_AUTOUPDATER: '1',
      DISABLE_TELEMETRY: '1',
      DISABLE_ERROR_REPORTING: '1',
      // Thinking on (this release asks for `adaptive` thinking by itself), so turn 1 has a signed block to send back.
      MAX_THINKING_TOKENS: '2048',
    });
    const why = `exit ${run.exitCode}\n${run.output}\n${run.log.slice(-2000)}`;
    expect(unsigned, why).toEqual([]);
    expect(run.exitCode, why).toBe(0);
    expect(run.output).toContain('Wrote hello.txt.');
    expect(existsSync(path.join(workDir, 'hello.txt')), why).toBe(true);
    expect(readFileSync(path.join(workDir, 'hello.txt'), 'utf8')).toBe('hello from bedrock\n');

    expect(turns).toHaveLength(2);
    for (const turn of turns) {
      expect(turn.anthropic_version).toBe('bedrock-2023-05-31');
      expect(turn.model).toBeUndefined();
    }
    // Thinking asked for, and the signed block of turn 1 back in turn 2 unchanged.
    expect(['enabled', 'adaptive']).toContain(turns[0].thinking?.type);
    const assistant = turns[1].messages.findLast((m: Body) => m.role === 'assistant');
    expect(assistant.content[0]).toEqual({ type: 'thinking', thinking: 'I should write the file.', signature: SIGNATURE });
    // Claude Code marks its prompt for caching: the marks reach Bedrock as it set them.
    expect(JSON.stringify(turns[1])).toContain('"cache_control":{"type":"ephemeral"');
  }, 240_000);
});
