import { describe, expect, it } from 'vitest';
import { LineCounter, parseDocument } from 'yaml';
import { describeYamlError } from './yaml-errors.ts';

/** The first syntax error of `text`, as line:col and message. */
function first(text: string): string {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  const [error] = doc.errors;
  if (!error) throw new Error(`no syntax error in ${JSON.stringify(text)}`);
  const { offset, message } = describeYamlError(error, text);
  const { line, col } = lines.linePos(offset);
  return `${line}:${col} ${message}`;
}

describe('YAML syntax errors in words', () => {
  it('an escaped quote does not close a string: the opening quote is the one reported', () => {
    expect(first('a: 1\nb: "x\\"\nc: 2\n')).toBe('2:4 the text opened with " here is never closed: add the closing " (on the same line)');
    expect(first("a: 'it''s\nb: 2\n")).toBe("1:4 the text opened with ' here is never closed: add the closing ' (on the same line)");
  });

  it('the innermost unclosed bracket before the error is the one reported', () => {
    expect(first('a: { b: [1, 2], c: { d: 1 }\nz: 1\n')).toBe('1:4 the "{" opened here is never closed: end the mapping with "}" (on the same line, or on lines indented more than its key)');
  });

  it('a line between two levels of a list item offers both columns', () => {
    expect(first('list:\n  - a: 1\n    b: 2\n   c: 3\n')).toBe('4:4 "c" at column 4 lines up with nothing above it: move it to column 5 (beside "b"), or to column 3 (beside "-")');
  });

  it('comments and blank lines are skipped when finding the line indented too far', () => {
    expect(first('a:\n  b: 1\n\n  # note\n    c: 2\n')).toBe('5:5 "c" at column 5 lines up with nothing above it: move it to column 3 (beside "b")');
  });
});
