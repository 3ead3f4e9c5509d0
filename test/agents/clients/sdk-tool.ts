/** The file-writing tool the SDK cases give their agents, run in this process like any app's tool. */
import { writeFileSync } from 'node:fs';
import { z } from 'zod';

export const WRITE_FILE = {
  name: 'write_file',
  description: 'Write text into a file, replacing what it held.',
  schema: z.object({ path: z.string().describe('absolute path of the file'), content: z.string().describe('the text to write') }),
  jsonSchema: {
    type: 'object',
    properties: { path: { type: 'string', description: 'absolute path of the file' }, content: { type: 'string', description: 'the text to write' } },
    required: ['path', 'content'],
    additionalProperties: false,
  } as const,
  run({ path, content }: { path: string; content: string }): string {
    writeFileSync(path, content);
    return `wrote ${content.length} characters to ${path}`;
  },
} as const;
