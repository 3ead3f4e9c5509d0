/**
 * The Anthropic SDK's tool runner (`client.beta.messages.toolRunner`): by default it runs over a
 * server-side message thread (`thread: {type: 'create' | 'continue'}`), and falls back to sending
 * the whole history when the server answers `thread_unsupported_request`.
 */
import Anthropic from '@anthropic-ai/sdk';
import { betaTool } from '@anthropic-ai/sdk/helpers/beta/json-schema';
import { type AgentClient, runSdk } from './run.ts';
import { WRITE_FILE } from './sdk-tool.ts';

export const anthropicToolRunner: AgentClient = {
  id: 'anthropic-tool-runner',
  speaks: 'messages',
  run: (ctx) =>
    runSdk(async () => {
      const client = new Anthropic({ baseURL: ctx.gatewayUrl, apiKey: ctx.apiKey, maxRetries: 0 });
      const writeFile = betaTool({ name: WRITE_FILE.name, description: WRITE_FILE.description, inputSchema: WRITE_FILE.jsonSchema, run: (input) => WRITE_FILE.run(input) });
      const final = await client.beta.messages.toolRunner({ model: ctx.alias, max_tokens: 1024, max_iterations: 4, messages: [{ role: 'user', content: ctx.prompt }], tools: [writeFile] });
      return final.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
    }),
};
