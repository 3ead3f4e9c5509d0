/**
 * The scripted model's one decision, whatever wire format carried the request: a request whose
 * prompt names a registered case and carries no tool result yet is answered with a call to the
 * client's own file-writing (or shell) tool, found by name among the tools it offers; once a tool
 * result is back, with the case's final text. Requests that name no case (title generation, quota
 * probes) get a short text.
 */

import { sampleOf } from './json-answer.ts';

/** A tool as a client offered it, flattened from its wire format. */
export interface OfferedTool {
  /** The name the client gave it (as the upstream received it: the gateway may have flattened a namespace into it). */
  name: string;
  /** `custom`: a freeform tool whose input is one string (Codex's `exec`, `apply_patch`). */
  kind: 'function' | 'custom';
  /** JSON Schema of a function tool's arguments. */
  // biome-ignore lint/suspicious/noExplicitAny: a client's JSON Schema, read by property name
  parameters?: Record<string, any>;
  /** The namespace it came in (Responses `namespace` tools), kept to answer in kind. */
  namespace?: string;
}

/** What the upstream read from one request. */
export interface TurnView {
  tools: OfferedTool[];
  /** Tool results the request carries (function_call_output, tool_result, role tool, functionResponse). */
  toolResults: string[];
  /** The whole request body as text: where the case marker is looked for. */
  raw: string;
  /** The JSON Schema the answer must fit, when the request asks for structured output. */
  jsonSchema?: unknown;
}

/** One scripted run: the client is asked to write `content` into `file`, then to say `finalText`. */
export interface AgentCase {
  id: string;
  /** Absolute path the tool call writes. */
  file: string;
  content: string;
  finalText: string;
}

export type Decision =
  /** `input` is the arguments object of a function tool, or the string input of a custom tool. */
  { kind: 'tool'; tool: OfferedTool; input: Record<string, unknown> | string; callId: string } | { kind: 'text'; text: string };

/** The prompt a client is given for a case; the marker is how the upstream finds the case again. */
export function promptFor(c: AgentCase): string {
  return `[case:${c.id}] Write the text "${c.content}" into the file ${c.file}, then say ${c.finalText}.`;
}

const MARKER = /\[case:([a-z0-9-]+)\]/;

/** The name without a namespace the gateway may have prefixed (`functions.exec`, `functions__exec`). */
export function bareName(name: string): string {
  const parts = name.split(/\.|__|:/);
  return parts[parts.length - 1]!;
}

/** Writing tools by what their arguments are called; the first a client offers wins. */
const WRITE_TOOLS: Array<{ names: string[]; path: string[]; content: string[] }> = [
  // Claude Code `Write`, Gemini CLI `write_file`, opencode `write`, the SDK tests' own `write_file`.
  { names: ['Write', 'write_file', 'write'], path: ['file_path', 'filePath', 'path'], content: ['content'] },
];

/** Shell tools and the argument that holds the command line. */
const SHELL_TOOLS: Array<{ names: string[]; arg: string }> = [
  { names: ['exec_command'], arg: 'cmd' }, // Codex (unified exec)
  { names: ['Bash', 'bash', 'run_shell_command', 'shell_command'], arg: 'command' },
];

/** A POSIX shell line that writes the content (both are plain ASCII without quotes by construction). */
function shellWrite(c: AgentCase): string {
  return `printf '%s' '${c.content}' > '${c.file}'`;
}

function properties(tool: OfferedTool): string[] {
  return Object.keys(tool.parameters?.properties ?? {});
}

/** The call that writes the case's file with one of the offered tools, if any fits. */
export function writeCall(tools: OfferedTool[], c: AgentCase): { tool: OfferedTool; input: Record<string, unknown> | string } | undefined {
  for (const plan of WRITE_TOOLS) {
    const tool = tools.find((t) => t.kind === 'function' && plan.names.includes(bareName(t.name)));
    if (!tool) continue;
    const props = properties(tool);
    const path = plan.path.find((p) => props.includes(p));
    const content = plan.content.find((p) => props.includes(p));
    if (path && content) return { tool, input: { [path]: c.file, [content]: c.content } };
  }
  for (const plan of SHELL_TOOLS) {
    const tool = tools.find((t) => t.kind === 'function' && plan.names.includes(bareName(t.name)));
    if (tool) return { tool, input: { [plan.arg]: shellWrite(c) } };
  }
  // Codex "code mode": one freeform `exec` tool running JavaScript that calls the nested tools. The
  // gateway may carry it as a function with one string argument: answer with that argument.
  const exec = tools.find((t) => bareName(t.name) === 'exec');
  if (exec) {
    const script = `await tools.exec_command({ cmd: ${JSON.stringify(shellWrite(c))} });\ntext('written');`;
    if (exec.kind === 'custom') return { tool: exec, input: script };
    const [arg] = properties(exec);
    if (arg) return { tool: exec, input: { [arg]: script } };
  }
  return undefined;
}

/** Looks cases up by the id in their prompt. */
export class CaseBook {
  readonly #cases = new Map<string, AgentCase>();
  #calls = 0;

  add(c: AgentCase): void {
    this.#cases.set(c.id, c);
  }

  find(raw: string): AgentCase | undefined {
    const id = MARKER.exec(raw)?.[1];
    return id ? this.#cases.get(id) : undefined;
  }

  decide(view: TurnView): Decision {
    if (view.jsonSchema) return { kind: 'text', text: JSON.stringify(sampleOf(view.jsonSchema)) };
    const c = this.find(view.raw);
    if (!c) return { kind: 'text', text: 'ok' };
    if (view.toolResults.length > 0) return { kind: 'text', text: `${c.finalText}` };
    const call = writeCall(view.tools, c);
    if (!call) return { kind: 'text', text: `no writing tool among: ${view.tools.map((t) => t.name).join(', ')}` };
    return { kind: 'tool', ...call, callId: `call_sy${++this.#calls}_${c.id.replace(/-/g, '')}` };
  }
}
