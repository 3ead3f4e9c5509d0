/**
 * Deterministic fake answers in the OpenAI wire format. The `mock` provider serves them in
 * process; the benchmark's fake upstream serves the same bytes over HTTP.
 */
import type { ChatCompletion, ChatCompletionChunk, ChatCompletionRequest, ChatMessage, ToolCall, Usage } from 'switchyard-gateway';
import { sampleOf } from './sample.ts';

export const DEFAULT_REPLY = 'Hello from Switchyard! This answer comes from the built-in mock provider, so no provider key was needed.';

/** A rough but stable token count: one token per word or punctuation run. */
export function countTokens(text: string): number {
  const matches = text.match(/\w+|[^\s\w]+/g);
  return matches ? matches.length : 0;
}

function messageText(message: ChatMessage): string {
  if (typeof message.content === 'string') return message.content;
  if (Array.isArray(message.content)) return message.content.map((p) => (p.type === 'text' ? p.text : '')).join(' ');
  return '';
}

export function promptTokens(request: ChatCompletionRequest): number {
  let n = 0;
  for (const m of request.messages) n += 4 + countTokens(messageText(m));
  return n;
}

/**
 * Behaves like a model that uses tools: when tools are offered (and tool_choice is not "none"),
 * it calls the named tool or the first one, unless the last message is already a tool result.
 */
function plannedToolCall(request: ChatCompletionRequest, seq: number): ToolCall | undefined {
  // Only function tools can be called (a custom or hosted tool is ignored, as a model would).
  const tools = request.tools?.filter((t) => t?.type === 'function' && typeof t.function?.name === 'string');
  const choice = request.tool_choice;
  if (!tools?.length || choice === 'none' || request.messages.at(-1)?.role === 'tool') return undefined;
  const named = choice && typeof choice === 'object' && typeof choice.function?.name === 'string' ? choice.function.name : undefined;
  const tool = tools.find((t) => t.function.name === named) ?? tools[0];
  const name = tool.function.name;
  // Arguments that satisfy the tool's schema, so SDK tool runners can parse and call it.
  const args = sampleOf(tool.function?.parameters ?? { type: 'object' });
  return { id: `call_mock_${seq}`, type: 'function', function: { name, arguments: JSON.stringify(args) } };
}

/** The reply as `response_format` asks: JSON for json_object, a schema-valid object for json_schema. */
function shapedReply(request: ChatCompletionRequest, reply: string): string {
  const format = request.response_format;
  if (format?.type === 'json_object') return JSON.stringify({ message: reply });
  if (format?.type === 'json_schema') return JSON.stringify(sampleOf(format.json_schema?.schema ?? { type: 'object' }));
  return reply;
}

/** Like a real model, never more output tokens than `max_completion_tokens`/`max_tokens` (then `finish_reason: length`). */
function capped(request: ChatCompletionRequest, reply: string): { text: string; truncated: boolean } {
  const max = request.max_completion_tokens ?? request.max_tokens;
  if (typeof max !== 'number' || max <= 0 || countTokens(reply) <= max) return { text: reply, truncated: false };
  const pieces = reply.match(/\w+|[^\s\w]+|\s+/g) ?? [];
  let text = '';
  let n = 0;
  for (const piece of pieces) {
    if (!/^\s+$/.test(piece) && ++n > max) break;
    text += piece;
  }
  return { text: text.trimEnd(), truncated: true };
}

function usageFor(request: ChatCompletionRequest, completion: string): Usage {
  const prompt_tokens = promptTokens(request);
  const completion_tokens = countTokens(completion);
  return { prompt_tokens, completion_tokens, total_tokens: prompt_tokens + completion_tokens };
}

let sequence = 0;

export function mockCompletion(request: ChatCompletionRequest, model: string, text = DEFAULT_REPLY, created = Math.floor(Date.now() / 1000)): ChatCompletion {
  const seq = ++sequence;
  const { text: reply, truncated } = capped(request, shapedReply(request, text));
  const toolCall = plannedToolCall(request, seq);
  const content = toolCall ? null : reply;
  return {
    id: `chatcmpl-mock-${seq}`,
    object: 'chat.completion',
    created,
    model,
    choices: [
      {
        index: 0,
        message: toolCall ? { role: 'assistant', content, refusal: null, tool_calls: [toolCall] } : { role: 'assistant', content, refusal: null },
        logprobs: null,
        finish_reason: toolCall ? 'tool_calls' : truncated ? 'length' : 'stop',
      },
    ],
    usage: usageFor(request, toolCall ? toolCall.function.arguments : reply),
  };
}

/** The reply split into word-sized deltas, then a finish chunk and a usage-only chunk. */
export function mockChunks(request: ChatCompletionRequest, model: string, text = DEFAULT_REPLY, created = Math.floor(Date.now() / 1000)): ChatCompletionChunk[] {
  const seq = ++sequence;
  const { text: reply, truncated } = capped(request, shapedReply(request, text));
  const id = `chatcmpl-mock-${seq}`;
  const chunk = (delta: ChatCompletionChunk['choices'][0]['delta'], finish: ChatCompletionChunk['choices'][0]['finish_reason'] = null): ChatCompletionChunk => ({
    id,
    object: 'chat.completion.chunk',
    created,
    model,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
  });
  const toolCall = plannedToolCall(request, seq);
  const out: ChatCompletionChunk[] = [];
  if (toolCall) {
    out.push(chunk({ role: 'assistant', content: null, tool_calls: [{ index: 0, id: toolCall.id, type: 'function', function: { name: toolCall.function.name, arguments: '' } }] }));
    out.push(chunk({ tool_calls: [{ index: 0, function: { arguments: toolCall.function.arguments } }] }));
    out.push(chunk({}, 'tool_calls'));
  } else {
    out.push(chunk({ role: 'assistant', content: '', refusal: null }));
    for (const piece of reply.match(/\S+\s*/g) ?? []) out.push(chunk({ content: piece }));
    out.push(chunk({}, truncated ? 'length' : 'stop'));
  }
  out.push({ id, object: 'chat.completion.chunk', created, model, choices: [], usage: usageFor(request, toolCall ? toolCall.function.arguments : reply) });
  return out;
}
