/**
 * LangChain's `ChatOpenAI` with `useResponsesApi: true`, a bound tool and the usual loop: invoke,
 * run each tool call into a ToolMessage, invoke again until the model answers with text.
 */
import type { BaseMessage } from '@langchain/core/messages';
import { HumanMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { ChatOpenAI } from '@langchain/openai';
import { type AgentClient, runSdk } from './run.ts';
import { WRITE_FILE } from './sdk-tool.ts';

export const langchain: AgentClient = {
  id: 'langchain (useResponsesApi)',
  speaks: 'responses',
  run: (ctx) =>
    runSdk(async () => {
      const llm = new ChatOpenAI({ model: ctx.alias, apiKey: ctx.apiKey, useResponsesApi: true, maxRetries: 0, configuration: { baseURL: `${ctx.gatewayUrl}/v1` } });
      const writeFile = tool(async (input: { path: string; content: string }) => WRITE_FILE.run(input), { name: WRITE_FILE.name, description: WRITE_FILE.description, schema: WRITE_FILE.schema });
      const model = llm.bindTools([writeFile]);
      const messages: BaseMessage[] = [new HumanMessage(ctx.prompt)];
      for (let turn = 0; turn < 4; turn++) {
        const reply = await model.invoke(messages);
        messages.push(reply);
        if (!reply.tool_calls?.length) return reply.text;
        for (const call of reply.tool_calls) messages.push(await writeFile.invoke(call));
      }
      throw new Error('no final answer after 4 turns');
    }),
};
