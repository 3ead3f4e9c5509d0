/**
 * The text of a request a guardrail reads, and writes back: every message's content (string or
 * text parts), the arguments of the tool calls in its history, an embeddings input. `edit` gets
 * each text with its place in the request and answers it, changed or not; what it changes is
 * copied, the rest is shared.
 */
import type { ChatCompletionRequest, EmbeddingRequest } from '../openai-types.ts';

export type EditText = (text: string, path: string) => string;

export function editRequestTexts(body: ChatCompletionRequest | EmbeddingRequest, edit: EditText): void {
  if ('messages' in body && Array.isArray(body.messages)) {
    body.messages = body.messages.map((m, i) => editMessage(m as Record<string, unknown>, i, edit) as typeof m);
  } else if ('input' in body) {
    const input = body.input;
    if (typeof input === 'string') body.input = edit(input, 'input');
    else if (Array.isArray(input) && input.every((x) => typeof x === 'string')) body.input = (input as string[]).map((x, i) => edit(x, `input[${i}]`));
  }
}

function editMessage(message: Record<string, unknown>, i: number, edit: EditText): Record<string, unknown> {
  let changed = message;
  const content = changed.content;
  if (typeof content === 'string') {
    const next = edit(content, `messages[${i}].content`);
    if (next !== content) changed = { ...changed, content: next };
  } else if (Array.isArray(content)) {
    const parts = content.map((p, j) => {
      const part = p as Record<string, unknown>;
      if (typeof part.text !== 'string') return p;
      const next = edit(part.text, `messages[${i}].content[${j}].text`);
      return next === part.text ? p : { ...part, text: next };
    });
    if (parts.some((p, j) => p !== content[j])) changed = { ...changed, content: parts };
  }
  const calls = changed.tool_calls;
  if (Array.isArray(calls)) {
    const next = calls.map((c, j) => {
      const call = c as { function?: { arguments?: unknown } };
      const args = call.function?.arguments;
      if (typeof args !== 'string') return c;
      const out = edit(args, `messages[${i}].tool_calls[${j}].function.arguments`);
      return out === args ? c : { ...call, function: { ...call.function, arguments: out } };
    });
    if (next.some((c, j) => c !== calls[j])) changed = { ...changed, tool_calls: next };
  }
  return changed;
}
