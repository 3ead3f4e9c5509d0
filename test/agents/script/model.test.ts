import { describe, expect, it } from 'vitest';
import { type AgentCase, CaseBook, type OfferedTool, promptFor, writeCall } from './model.ts';
import { sampleOf } from './json-answer.ts';

const c: AgentCase = { id: 'demo-openai-1a2b', file: '/tmp/w/agent-note.txt', content: 'note-1', finalText: 'All done 1' };
const fn = (name: string, ...props: string[]): OfferedTool => ({ name, kind: 'function', parameters: { type: 'object', properties: Object.fromEntries(props.map((p) => [p, { type: 'string' }])) } });

describe("the scripted model picks the client's own tool", () => {
  it('prefers a writing tool, in its own argument names', () => {
    expect(writeCall([fn('Bash', 'command'), fn('Write', 'file_path', 'content')], c)?.input).toEqual({ file_path: c.file, content: 'note-1' });
    expect(writeCall([fn('write', 'content', 'filePath')], c)?.input).toEqual({ filePath: c.file, content: 'note-1' });
  });
  it('falls back to a shell tool, namespaced or not', () => {
    expect(writeCall([fn('exec_command', 'cmd')], c)?.input).toEqual({ cmd: `printf '%s' 'note-1' > '${c.file}'` });
    expect(writeCall([fn('functions__run_shell_command', 'command')], c)?.tool.name).toBe('functions__run_shell_command');
  });
  it("answers Codex's freeform exec with JavaScript, as a string or as the one argument it was flattened to", () => {
    expect(writeCall([{ name: 'exec', kind: 'custom', namespace: 'functions' }], c)?.input).toContain('tools.exec_command');
    expect(writeCall([fn('functions.exec', 'input')], c)?.input).toEqual({ input: expect.stringContaining('tools.exec_command') });
  });
  it('calls the tool on the first turn and answers once a result is back; other requests get a short text', () => {
    const book = new CaseBook();
    book.add(c);
    const raw = JSON.stringify({ prompt: promptFor(c) });
    expect(book.decide({ tools: [fn('write_file', 'path', 'content')], toolResults: [], raw })).toMatchObject({ kind: 'tool', input: { path: c.file } });
    expect(book.decide({ tools: [], toolResults: ['ok'], raw })).toEqual({ kind: 'text', text: 'All done 1' });
    expect(book.decide({ tools: [], toolResults: [], raw: 'Generate a title' })).toEqual({ kind: 'text', text: 'ok' });
  });
});

describe('a structured-output request is answered with JSON that fits its schema', () => {
  it("answers Gemini CLI's router classifier in kind, even when the prompt names a case", () => {
    const schema = { type: 'OBJECT', properties: { reasoning: { type: 'STRING' }, model_choice: { type: 'STRING', enum: ['flash', 'pro'] } }, required: ['reasoning', 'model_choice'] };
    const book = new CaseBook();
    book.add(c);
    const decision = book.decide({ tools: [], toolResults: [], raw: promptFor(c), jsonSchema: schema });
    expect(decision).toEqual({ kind: 'text', text: JSON.stringify({ reasoning: 'scripted', model_choice: 'flash' }) });
    expect(sampleOf({ type: 'object', properties: { complexity_score: { type: 'integer', minimum: 1 }, tags: { type: 'array' } } })).toEqual({ complexity_score: 1, tags: [] });
  });
});
