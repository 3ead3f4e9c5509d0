/**
 * The YAML parser's syntax errors in plain words, each placed where the mistake is and saying
 * how to fix it. The parser names its own tokens ("Unexpected flow-map-start token") and
 * places some errors where it noticed them rather than where they are: an unclosed `{` or
 * quote at the end of the line or file, a line indented too far at the value on the line
 * above. What it says that is not known here is passed on as it is.
 */
import { Parser, type YAMLError } from 'yaml';

export interface SyntaxFinding {
  /** Offset in the text of the mistake. */
  offset: number;
  message: string;
}

export function describeYamlError(error: YAMLError, text: string): SyntaxFinding {
  const offset = error.pos[0];
  const said = error.message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '');
  const lines = new Lines(text);

  if (error.code === 'TAB_AS_INDENT') return { offset, message: 'a tab is used for indentation; YAML indents with spaces only: replace the tab with spaces' };
  if (error.code === 'MULTIPLE_DOCS') {
    return { offset, message: 'a second YAML document starts here ("---"); gateway.yaml holds one: remove this line and merge what follows into the document above' };
  }
  if (said.startsWith('Missing directives-end')) return { offset, message: 'a "%" directive line must be followed by a "---" line: add one below it, or remove the directive' };
  if (error.code === 'BAD_DQ_ESCAPE') return { offset, message: 'this escape is not one YAML knows inside "double quotes": write \\\\ for a backslash, or use \'single quotes\'' };
  if (error.code === 'BAD_SCALAR_START') {
    return { offset, message: `a plain value cannot start with "${text[offset] ?? ''}": put the value in quotes` };
  }

  const quote = /^Missing closing (["'])quote/.exec(said)?.[1];
  if (quote) {
    const start = unclosed(text, (t) => t.type === (quote === '"' ? 'double-quoted-scalar' : 'single-quoted-scalar') && !closedQuote(t.source ?? '', quote));
    return { offset: start ?? offset, message: `the text opened with ${quote} here is never closed: add the closing ${quote} (on the same line)` };
  }
  const flow = /^Flow (map|sequence) in block collection/.exec(said)?.[1];
  if (flow) {
    const [open, close, what] = flow === 'map' ? ['{', '}', 'mapping'] : ['[', ']', 'list'];
    const start = unclosed(text, (t) => t.type === 'flow-collection' && t.start?.source === open && !(t.end ?? []).some((e) => e.source === close), offset);
    return {
      offset: start ?? offset,
      message: `the "${open}" opened here is never closed: end the ${what} with "${close}" (on the same line, or on lines indented more than its key)`,
    };
  }
  const token = /^Unexpected (\S+) token in YAML stream: "(.*)"$/.exec(said);
  if (token) return { offset, message: unexpectedToken(token[1], token[2]) };
  const inFlow = /^Unexpected (.+) in flow (map|sequence)$/.exec(said);
  if (inFlow) {
    const inside = inFlow[2] === 'map' ? '{ ... }' : '[ ... ]';
    return { offset, message: `unexpected "${inFlow[1]}" inside ${inside}: separate the entries with one "," each` };
  }

  if (said === 'Nested mappings are not allowed in compact mappings') {
    // Noticed at the value of the line above; the mistake is the next line's indentation.
    const culprit = lines.nextContentLine(lines.lineOf(offset));
    if (culprit !== undefined) return misaligned(lines, culprit, `is indented more than the line above, whose value is already set`);
  }
  if (error.code === 'BAD_INDENT' || said === 'Sequence item without - indicator') {
    return misaligned(lines, lines.lineOf(offset), 'lines up with nothing above it');
  }
  if (said === 'A block sequence may not be used as an implicit map key') {
    return { offset, message: 'this "- " list item belongs to no key: indent it under a key that ends with ":", or remove the "-"' };
  }
  if (said === 'Implicit keys need to be on a single line') {
    const line = lines.text(lines.lineOf(offset)).trim();
    if (!line.includes(':')) return { offset, message: `"${line}" has no ":" after it, so the indented lines below cannot belong to it: write "${line}:"` };
    return { offset, message: 'a key and its ":" must be on one line' };
  }
  if (said === 'Implicit map keys need to be followed by map values') {
    const line = lines.text(lines.lineOf(offset)).trim();
    if (line.startsWith('{') || line.startsWith('[')) {
      return { offset, message: `a ${line[0]} ... ${line[0] === '{' ? '}' : ']'} cannot stand alone here: give it a key ("name: ${line}") or write its entries as "key: value" lines` };
    }
    return { offset, message: 'this line is not "key: value": add ":" and a space after the key' };
  }
  return { offset, message: `YAML: ${said}` };
}

function unexpectedToken(kind: string, source: string): string {
  if (kind === 'flow-map-end' || kind === 'flow-seq-end') {
    const open = kind === 'flow-map-end' ? '{' : '[';
    return `"${source}" closes nothing: remove it, or add the "${open}" it should close`;
  }
  if (kind === 'flow-map-start' || kind === 'flow-seq-start') {
    return `a "${source}" cannot start here: a ${source} ... ${source === '{' ? '}' : ']'} goes after "key: " or "- "`;
  }
  return `"${source}" is out of place here: check the line above for an unclosed bracket or quote, or a missing ":"`;
}

/** The line starts with a key that lines up with no key above it: say where it could go. */
function misaligned(lines: Lines, at: number, problem: string): SyntaxFinding {
  // The parser may stop on a blank or comment line before the misplaced one.
  const line = lines.isContent(at) ? at : (lines.nextContentLine(at) ?? at);
  const content = lines.text(line);
  const column = content.length - content.trimStart().length + 1;
  const subject = content.trim().replace(/:(\s.*)?$/, '');
  const above = lines.enclosingKeys(line);
  const deeper = above.filter((k) => k.column > column).at(-1);
  const shallower = above.find((k) => k.column < column);
  const choices = [deeper, shallower].filter((k) => k !== undefined).map((k) => `column ${k.column} (beside "${k.name}")`);
  const fix = choices.length ? `: move it to ${choices.join(', or to ')}` : '';
  return { offset: lines.offset(line) + column - 1, message: `"${subject}" at column ${column} ${problem}${fix}` };
}

interface CstToken {
  type?: string;
  offset?: number;
  source?: string;
  start?: { source?: string };
  end?: Array<{ source?: string }>;
}

/** Offset of the last token (before `before`, when given) that matches: the unclosed one. */
function unclosed(text: string, matches: (token: CstToken) => boolean, before = Number.POSITIVE_INFINITY): number | undefined {
  let found: number | undefined;
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) {
      for (const item of node) visit(item);
      return;
    }
    if (!node || typeof node !== 'object') return;
    const token = node as CstToken;
    if (typeof token.offset === 'number' && token.offset < before && matches(token) && (found === undefined || token.offset > found)) found = token.offset;
    for (const value of Object.values(node)) if (value && typeof value === 'object') visit(value);
  };
  for (const token of new Parser().parse(text)) visit(token);
  return found;
}

function closedQuote(source: string, quote: string): boolean {
  if (source.length < 2 || !source.endsWith(quote)) return false;
  // "a\" is not closed; 'it''s' is.
  if (quote === '"') return (source.slice(1, -1).match(/\\*$/)?.[0].length ?? 0) % 2 === 0;
  return true;
}

/** The text by lines (1-based), for indentation messages. */
class Lines {
  readonly #starts: number[] = [0];
  readonly #text: string;

  constructor(text: string) {
    this.#text = text;
    for (let i = 0; i < text.length; i++) if (text[i] === '\n') this.#starts.push(i + 1);
  }

  lineOf(offset: number): number {
    let line = 1;
    while (line < this.#starts.length && this.#starts[line] <= offset) line++;
    return line;
  }

  offset(line: number): number {
    return this.#starts[line - 1] ?? this.#text.length;
  }

  text(line: number): string {
    const start = this.offset(line);
    const end = line < this.#starts.length ? this.#starts[line] - 1 : this.#text.length;
    return this.#text.slice(start, end).replace(/\r$/, '');
  }

  isContent(line: number): boolean {
    const t = this.text(line).trim();
    return t !== '' && !t.startsWith('#');
  }

  nextContentLine(line: number): number | undefined {
    for (let l = line + 1; l <= this.#starts.length; l++) if (this.isContent(l)) return l;
    return undefined;
  }

  /** The keys a line could line up with: each line above that starts further left than all below it (and a "- " item's key). */
  enclosingKeys(line: number): Array<{ column: number; name: string }> {
    const keys: Array<{ column: number; name: string }> = [];
    let limit = Number.POSITIVE_INFINITY;
    for (let l = line - 1; l >= 1 && limit > 1; l--) {
      if (!this.isContent(l)) continue;
      const text = this.text(l);
      const trimmed = text.trimStart();
      const column = text.length - trimmed.length + 1;
      const item = /^-\s+/.exec(trimmed);
      const candidates = item
        ? [
            { column: column + item[0].length, name: trimmed.slice(item[0].length) },
            { column, name: '-' },
          ]
        : [{ column, name: trimmed }];
      for (const c of candidates) {
        if (c.column >= limit) continue;
        keys.push({ column: c.column, name: c.name.replace(/:(\s.*)?$/, '') });
        limit = c.column;
      }
    }
    return keys;
  }
}
