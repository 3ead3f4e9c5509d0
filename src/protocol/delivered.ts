/**
 * How much of an answer reached the client, in characters of content, reasoning and tool
 * arguments: what an answer without a usage report is charged by (4 characters a token).
 */

/** A stream's delta or a completion's message: the parts that carry text. */
export interface TextBearing {
  content?: unknown;
  reasoning_content?: unknown;
  tool_calls?: ReadonlyArray<{ function?: { arguments?: string } }>;
}

export function deltaLength(part: TextBearing | undefined): number {
  if (!part) return 0;
  let n = typeof part.content === 'string' ? part.content.length : 0;
  if (typeof part.reasoning_content === 'string') n += part.reasoning_content.length;
  if (part.tool_calls) for (const call of part.tool_calls) n += call.function?.arguments?.length ?? 0;
  return n;
}
