/** Types for scripts/check-docs.mjs, for the tests that reuse its Markdown reader. */
export interface CodeBlock {
  /** The fence's language (`ts`, `js`, ...), lower case; '' when none. */
  lang: string;
  /** The rest of the fence's info string (`file=acme/index.ts`, `fragment`). */
  info: string;
  /** The 1-based line of the block's first content line in its document. */
  line: number;
  text: string;
}
export function codeBlocks(markdown: string): CodeBlock[];
export function checkDocs(docs?: string[]): { problems: string[]; checked: number; fragments: number };
