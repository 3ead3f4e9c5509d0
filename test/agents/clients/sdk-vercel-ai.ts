/**
 * The Vercel AI SDK's default `openai(model)` (the Responses API, `store` left at its default):
 * `generateText` with a tool and a step limit runs the tool loop, then a second user turn is sent
 * with the first turn's `response.messages` as history, as a chat app does. With `store` on, the
 * SDK sends the assistant items it got back as `item_reference`s by id.
 */
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, type ModelMessage, stepCountIs, tool } from 'ai';
import { type AgentClient, runSdk } from './run.ts';
import { WRITE_FILE } from './sdk-tool.ts';

export const vercelAi: AgentClient = {
  id: 'vercel-ai-sdk',
  speaks: 'responses',
  run: (ctx) =>
    runSdk(async () => {
      const openai = createOpenAI({ baseURL: `${ctx.gatewayUrl}/v1`, apiKey: ctx.apiKey });
      const tools = { [WRITE_FILE.name]: tool({ description: WRITE_FILE.description, inputSchema: WRITE_FILE.schema, execute: async (input) => WRITE_FILE.run(input) }) };
      const messages: ModelMessage[] = [{ role: 'user', content: ctx.prompt }];
      const first = await generateText({ model: openai(ctx.alias), tools, messages, stopWhen: stepCountIs(4), maxRetries: 0 });
      messages.push(...first.response.messages, { role: 'user', content: 'Thanks. Say it once more.' });
      const second = await generateText({ model: openai(ctx.alias), tools, messages, stopWhen: stepCountIs(4), maxRetries: 0 });
      return `${first.text}\n${second.text}`;
    }),
};
