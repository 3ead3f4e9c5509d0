/**
 * OpenAI chat request → Anthropic Messages request (https://docs.anthropic.com/en/api/messages).
 * System and developer messages become the top-level `system`; tool results become
 * `tool_result` blocks in a user turn; consecutive turns of one role are merged, since the
 * Messages API wants user and assistant to alternate.
 */
import type { ChatCompletionRequest, ChatMessage } from '../../src/openai-types.ts';
import type { ProviderCall } from '../../src/plugin-api.ts';
import { GatewayError } from '../../src/errors.ts';
import { checkUnsupported, unsupportedParam } from '../../src/providers/params.ts';
import { parseArguments, parseDataUrl, partsOf, textOf } from '../../src/protocol/content.ts';

export type AnthropicBlock = Record<string, unknown> & { type: string };
export interface AnthropicMessage {
  role: 'user' | 'assistant';
  content: string | AnthropicBlock[];
}

/** Parameters the Messages API has no equivalent for. */
const UNSUPPORTED = ['seed', 'presence_penalty', 'frequency_penalty', 'logprobs', 'top_logprobs', 'logit_bias', 'audio', 'modalities', 'prediction'];

export function buildMessagesRequest(call: ProviderCall, defaultMaxTokens: number): Record<string, unknown> {
  const r = call.request;
  checkUnsupported(call, UNSUPPORTED);
  if (typeof r.n === 'number' && r.n > 1) unsupportedParam(call, 'n', 'above 1 is not supported');
  if (r.response_format && r.response_format.type !== 'text') unsupportedParam(call, 'response_format');

  const system: string[] = [];
  const messages: AnthropicMessage[] = [];
  r.messages.forEach((m, i) => {
    if (m.role === 'system' || m.role === 'developer') system.push(textOf(m.content));
    else push(messages, translateMessage(m, i, call));
  });

  const body: Record<string, unknown> = {
    model: call.model,
    max_tokens: r.max_completion_tokens ?? r.max_tokens ?? defaultMaxTokens,
    messages,
  };
  if (system.length) body.system = system.join('\n\n');
  if (r.temperature != null) body.temperature = r.temperature;
  if (r.top_p != null) body.top_p = r.top_p;
  if (r.stop != null) body.stop_sequences = Array.isArray(r.stop) ? r.stop : [r.stop];
  const userId = r.user ?? (r.metadata as Record<string, string> | undefined)?.user_id;
  if (userId) body.metadata = { user_id: userId };
  if (r.tools?.length) {
    body.tools = r.tools.map((tool) => {
      if (tool.type !== 'function') unsupportedParam(call, 'tools', `of type "${tool.type}" are not supported`);
      const f = tool.function;
      return { name: f.name, ...(f.description ? { description: f.description } : {}), input_schema: f.parameters ?? { type: 'object', properties: {} } };
    });
  }
  const choice = toolChoice(r);
  if (choice) body.tool_choice = choice;
  // Anthropic's own extended-thinking switch passes through for clients that know it.
  if (r.thinking && typeof r.thinking === 'object') body.thinking = r.thinking;
  if (call.stream) body.stream = true;
  return body;
}

function toolChoice(r: ChatCompletionRequest): Record<string, unknown> | undefined {
  const c = r.tool_choice;
  let choice: Record<string, unknown> | undefined;
  if (c === 'auto') choice = { type: 'auto' };
  else if (c === 'required') choice = { type: 'any' };
  else if (c === 'none') choice = { type: 'none' };
  else if (c && typeof c === 'object') choice = { type: 'tool', name: c.function.name };
  if (r.parallel_tool_calls === false && r.tools?.length) {
    choice = { ...(choice ?? { type: 'auto' }), disable_parallel_tool_use: true };
  }
  return choice;
}

function translateMessage(m: ChatMessage, i: number, call: ProviderCall): AnthropicMessage {
  switch (m.role) {
    case 'user':
      return { role: 'user', content: typeof m.content === 'string' ? m.content : partsOf(m.content).map((p, j) => userBlock(p, `messages[${i}].content[${j}]`, call)) };
    case 'assistant': {
      const blocks: AnthropicBlock[] = [];
      const text = textOf(m.content);
      if (text) blocks.push({ type: 'text', text });
      (m.tool_calls ?? []).forEach((tc, j) => {
        let input: Record<string, unknown>;
        try {
          input = parseArguments(tc.function.arguments);
        } catch {
          throw new GatewayError('invalid_request', `messages[${i}].tool_calls[${j}].function.arguments is not valid JSON.`, { param: `messages[${i}].tool_calls[${j}].function.arguments` });
        }
        blocks.push({ type: 'tool_use', id: tc.id, name: tc.function.name, input });
      });
      return { role: 'assistant', content: blocks };
    }
    case 'tool':
      return { role: 'user', content: [{ type: 'tool_result', tool_use_id: m.tool_call_id ?? '', content: textOf(m.content) }] };
    default:
      unsupportedParam(call, `messages[${i}].role`, `"${m.role}" is not supported`);
      return { role: 'user', content: [] };
  }
}

function userBlock(part: ReturnType<typeof partsOf>[number], param: string, call: ProviderCall): AnthropicBlock {
  if (part.type === 'text') return { type: 'text', text: part.text };
  if (part.type === 'image_url') {
    const url = part.image_url.url;
    const data = parseDataUrl(url);
    return { type: 'image', source: data ? { type: 'base64', media_type: data.mediaType, data: data.data } : { type: 'url', url } };
  }
  unsupportedParam(call, param, `(a ${part.type} part) is not supported`);
  return { type: 'text', text: '' };
}

/** Appends a turn, merging it into the previous one when both have the same role. */
function push(messages: AnthropicMessage[], next: AnthropicMessage): void {
  const last = messages.at(-1);
  if (!last || last.role !== next.role) {
    messages.push(next);
    return;
  }
  last.content = [...blocksOf(last.content), ...blocksOf(next.content)];
}

function blocksOf(content: string | AnthropicBlock[]): AnthropicBlock[] {
  return typeof content === 'string' ? [{ type: 'text', text: content }] : content;
}
