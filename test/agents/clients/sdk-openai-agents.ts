/**
 * The OpenAI Agents SDK: an Agent with one function tool on an `OpenAIResponsesModel` (the SDK's
 * default API) whose client points at the gateway; `run()` loops until the final output. Tracing
 * is off: its exporter would send spans to OpenAI.
 */
import { Agent, OpenAIResponsesModel, run, setTracingDisabled, tool } from '@openai/agents';
import OpenAI from 'openai';
import { type AgentClient, runSdk } from './run.ts';
import { WRITE_FILE } from './sdk-tool.ts';

export const openaiAgents: AgentClient = {
  id: 'openai-agents-sdk',
  speaks: 'responses',
  run: (ctx) =>
    runSdk(async () => {
      setTracingDisabled(true);
      const client = new OpenAI({ baseURL: `${ctx.gatewayUrl}/v1`, apiKey: ctx.apiKey, maxRetries: 0 });
      const writeFile = tool({ name: WRITE_FILE.name, description: WRITE_FILE.description, parameters: WRITE_FILE.schema, execute: (input) => WRITE_FILE.run(input) });
      const agent = new Agent({ name: 'writer', instructions: 'You write files when asked.', model: new OpenAIResponsesModel(client, ctx.alias), tools: [writeFile] });
      const result = await run(agent, ctx.prompt, { maxTurns: 4 });
      return String(result.finalOutput ?? '');
    }),
};
