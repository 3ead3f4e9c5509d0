/**
 * Test helpers for the Messages ingress (used by the *.test.ts beside this file): chat chunks
 * folded into the completion they add up to, and the type shape of a JSON value for comparing
 * ours with recorded Anthropic payloads.
 */
import type { ChatCompletion, ChatCompletionChunk, ThinkingBlock, ToolCall } from '../../openai-types.ts';

/** What a client accumulating the chunks would hold: the same answer as one completion. */
export function foldChunks(chunks: ChatCompletionChunk[]): ChatCompletion {
  const first = chunks.find((c) => c.id) ?? chunks[0];
  let content = '';
  let refusal = '';
  let reasoning = '';
  /** Reasoning since the last signature: a signature closes it into a block (see ChatCompletionChunk). */
  let run = '';
  const thinking: ThinkingBlock[] = [];
  const calls = new Map<number, ToolCall>();
  const choice: ChatCompletion['choices'][number] = { index: 0, message: { role: 'assistant', content: null }, finish_reason: null };
  let usage: ChatCompletion['usage'];
  for (const chunk of chunks) {
    if (chunk.usage) usage = chunk.usage;
    const c = chunk.choices?.[0];
    if (!c) continue;
    const d = c.delta ?? {};
    if (typeof d.content === 'string') content += d.content;
    if (typeof d.refusal === 'string') refusal += d.refusal;
    if (typeof d.reasoning_content === 'string') {
      reasoning += d.reasoning_content;
      run += d.reasoning_content;
    }
    for (const b of d.thinking_blocks ?? []) {
      if (b.type === 'redacted_thinking') thinking.push(b);
      else if (b.signature) {
        thinking.push({ type: 'thinking', thinking: run + b.thinking, signature: b.signature });
        run = '';
      }
    }
    for (const t of d.tool_calls ?? []) {
      const call = calls.get(t.index) ?? { id: '', type: 'function' as const, function: { name: '', arguments: '' } };
      if (t.id) call.id = t.id;
      if (t.function?.name) call.function.name = t.function.name;
      call.function.arguments += t.function?.arguments ?? '';
      calls.set(t.index, call);
    }
    if (c.finish_reason) {
      choice.finish_reason = c.finish_reason;
      if (c.stop_reason !== undefined) choice.stop_reason = c.stop_reason;
    }
  }
  choice.message.content = content || null;
  if (refusal) choice.message.refusal = refusal;
  if (reasoning) choice.message.reasoning_content = reasoning;
  if (run && thinking.length) thinking.push({ type: 'thinking', thinking: run });
  if (thinking.length) choice.message.thinking_blocks = thinking;
  if (calls.size) choice.message.tool_calls = [...calls.entries()].sort(([a], [b]) => a - b).map(([, call]) => call);
  return { id: first.id, object: 'chat.completion', created: first.created, model: first.model, choices: [choice], usage };
}

/** Every key of a JSON value with the type of its value ('null' for null), arrays element by element. */
export function shapeOf(value: unknown): unknown {
  if (value === null) return 'null';
  if (Array.isArray(value)) return value.map(shapeOf);
  if (typeof value === 'object') return Object.fromEntries(Object.entries(value as object).map(([k, v]) => [k, shapeOf(v)]));
  return typeof value;
}

/** A copy without the given dotted paths (fields of real payloads this ingress does not produce). */
export function without(value: unknown, paths: string[]): unknown {
  type Node = { [key: string]: Node | undefined };
  const copy = structuredClone(value) as Node;
  for (const path of paths) {
    const keys = path.split('.');
    const last = keys.pop()!;
    let at: Node | undefined = copy;
    for (const k of keys) at = at?.[k];
    if (at) delete at[last];
  }
  return copy;
}
