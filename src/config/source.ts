/**
 * gateway.yaml as a YAML document that still knows where every node came from, so that any
 * finding (schema, cross-check, plugin options) can be reported as file:line:col.
 */
import { type Document, LineCounter, parseDocument, isMap, isPair, isScalar, isSeq, visit, type Node, type Pair } from 'yaml';
import { describeYamlError } from './yaml-errors.ts';
import { formatPath, type ConfigIssue, type PathSegment } from './issues.ts';

/**
 * The issues found in one config file, each placed at file:line:col. Where positions come from
 * is the subclass's: the YAML document itself (ConfigSource), or a table of them made by a
 * reload's worker thread (config/parse-off-thread.ts).
 */
export abstract class ConfigIssues {
  readonly file: string;
  readonly issues: ConfigIssue[] = [];
  /**
   * Applied to every message added from now on. A message may quote a value (an enum's "got
   * ..."), and values read with `${file:...}` are secrets: interpolation sets this so that no
   * path (validate, start, reload, the console's dry run) prints them.
   */
  scrub: (message: string) => string = (message) => message;

  constructor(file: string) {
    this.file = file;
  }

  /** Line and column of the node at `path`, or of its nearest existing ancestor. */
  abstract locate(path: readonly PathSegment[], key?: boolean): { line: number; col: number };

  issue(severity: ConfigIssue['severity'], path: readonly PathSegment[], message: string, opts: { key?: boolean; at?: { line: number; col: number } } = {}): ConfigIssue {
    const { line, col } = opts.at ?? this.locate(path, opts.key);
    const issue: ConfigIssue = { severity, file: this.file, line, col, path: formatPath(path), message: this.scrub(message) };
    this.issues.push(issue);
    return issue;
  }

  error(path: readonly PathSegment[], message: string, opts?: { key?: boolean }): void {
    this.issue('error', path, message, opts);
  }

  get hasErrors(): boolean {
    return this.issues.some((i) => i.severity === 'error');
  }
}

export class ConfigSource extends ConfigIssues {
  readonly doc: Document.Parsed;
  readonly #lines: LineCounter;

  constructor(file: string, text: string) {
    super(file);
    this.#lines = new LineCounter();
    this.doc = parseDocument(text, { lineCounter: this.#lines, prettyErrors: false, uniqueKeys: true });
    // Only the first syntax error: the ones after it are nearly always its echoes.
    for (const e of [...this.doc.errors.slice(0, 1), ...this.doc.warnings]) {
      // A repeated key is named by its path (`models.demo`), like every other config error.
      const keyPath = e.code === 'DUPLICATE_KEY' ? pathOfKeyAt(this.doc.contents, e.pos[0], []) : undefined;
      const { offset, message } = keyPath
        ? { offset: e.pos[0], message: `"${keyPath[keyPath.length - 1]}" appears twice in this mapping (YAML keys must be unique): remove one, or rename it` }
        : describeYamlError(e, text);
      const [line, col] = this.#pos(offset);
      // Cast on purpose: a warning is not of doc.errors' type; includes() only compares identity.
      this.issues.push({ severity: this.doc.errors.includes(e as never) ? 'error' : 'warning', file, line, col, path: keyPath ? formatPath(keyPath) : '', message });
    }
    if (this.doc.errors.length === 0) this.#checkAliases();
  }

  /** `*name` with no `&name` before it would only fail later, inside the YAML library, without a position. */
  #checkAliases(): void {
    visit(this.doc, {
      Alias: (_, alias) => {
        if (alias.resolve(this.doc)) return;
        const [line, col] = alias.range ? this.#pos(alias.range[0]) : [1, 1];
        this.issues.push({
          severity: 'error',
          file: this.file,
          line,
          col,
          path: '',
          message: `"*${alias.source}" refers to no anchor: define "&${alias.source}" on a value above it, or put the text in quotes if "*" was meant literally`,
        });
        return visit.BREAK;
      },
    });
  }

  /** The node at a path; with `key`, the mapping key naming the last segment (for unknown fields). */
  node(path: readonly PathSegment[], key = false): Node | undefined {
    if (!key || path.length === 0) {
      const n = path.length === 0 ? this.doc.contents : this.doc.getIn(path, true);
      return (n as Node | null) ?? undefined;
    }
    const parent = this.node(path.slice(0, -1));
    const last = path[path.length - 1];
    if (isMap(parent)) {
      const pair = parent.items.find((p: Pair) => isScalar(p.key) && String(p.key.value) === String(last));
      return (pair?.key as Node | undefined) ?? undefined;
    }
    // A list item has no key of its own: the item stands for it.
    if (isSeq(parent) && typeof last === 'number') return (parent.items[last] as Node | undefined) ?? undefined;
    return undefined;
  }

  /** Line and column of the node at `path`, or of its nearest existing ancestor. */
  locate(path: readonly PathSegment[], key = false): { line: number; col: number } {
    for (let depth = path.length; depth >= 0; depth--) {
      const n = this.node(path.slice(0, depth), key && depth === path.length);
      if (n?.range) {
        const [line, col] = this.#pos(n.range[0]);
        return { line, col };
      }
    }
    return { line: 1, col: 1 };
  }

  /**
   * Where every node starts (and, for a mapping value, where its key starts), by formatted path:
   * what a worker thread hands back so that issues found later, on the serving thread, keep their
   * file:line:col without the YAML document. Below `keys[i]` only the entry itself is recorded:
   * tens of thousands of keys would otherwise make the table the size of the file again.
   */
  positionTable(): PositionTable {
    const table: PositionTable = new Map();
    const walk = (node: unknown, path: PathSegment[], keyNode?: Node): void => {
      const at = node as Node | undefined;
      const here: number[] = at?.range ? this.#pos(at.range[0]) : [];
      if (keyNode?.range) here.push(...(here.length ? [] : [0, 0]), ...this.#pos(keyNode.range[0]));
      if (here.length) table.set(formatPath(path), here);
      if (path[0] === 'keys' && path.length >= 2) return;
      if (isMap(node)) {
        for (const pair of node.items) if (isScalar(pair.key)) walk(pair.value, [...path, String(pair.key.value)], pair.key);
      } else if (isSeq(node)) node.items.forEach((item, i) => walk(item, [...path, i]));
    };
    walk(this.doc.contents, []);
    return table;
  }

  positionOf(node: Node): { line: number; col: number } {
    const [line, col] = node.range ? this.#pos(node.range[0]) : [1, 1];
    return { line, col };
  }

  #pos(offset: number): [number, number] {
    const p = this.#lines.linePos(offset);
    return [p.line, p.col];
  }
}

/** Formatted path → [line, col] of the node, then [line, col] of its mapping key when it has one ([0, 0] first when only the key is known). */
export type PositionTable = Map<string, number[]>;

/** Issues placed from a position table (built by ConfigSource.positionTable in a worker thread). */
export class PlacedIssues extends ConfigIssues {
  readonly #table: PositionTable;

  constructor(file: string, table: PositionTable) {
    super(file);
    this.#table = table;
  }

  locate(path: readonly PathSegment[], key = false): { line: number; col: number } {
    for (let depth = path.length; depth >= 0; depth--) {
      const p = this.#table.get(formatPath(path.slice(0, depth)));
      if (!p) continue;
      if (key && depth === path.length && p.length === 4) return { line: p[2], col: p[3] };
      if (p[0] > 0) return { line: p[0], col: p[1] };
    }
    return { line: 1, col: 1 };
  }
}

/** The path of the mapping key that starts at `offset`, if any. */
function pathOfKeyAt(node: unknown, offset: number, path: PathSegment[]): PathSegment[] | undefined {
  if (isMap(node)) {
    for (const pair of node.items) {
      const key = isScalar(pair.key) ? pair.key : undefined;
      const name = key ? String(key.value) : '';
      if (key?.range && key.range[0] === offset) return [...path, name];
      const inner = pathOfKeyAt(pair.value, offset, [...path, name]);
      if (inner) return inner;
    }
  } else if (isSeq(node)) {
    for (const [i, item] of node.items.entries()) {
      const inner = pathOfKeyAt(item, offset, [...path, i]);
      if (inner) return inner;
    }
  }
  return undefined;
}

/** Walks every scalar value (not keys) with its path. */
export function visitScalars(node: unknown, path: PathSegment[], visit: (scalar: import('yaml').Scalar, path: PathSegment[]) => void): void {
  if (isScalar(node)) visit(node, path);
  else if (isMap(node)) {
    for (const pair of node.items) {
      if (isPair(pair) && isScalar(pair.key)) visitScalars(pair.value, [...path, String(pair.key.value)], visit);
    }
  } else if (isSeq(node)) node.items.forEach((item, i) => visitScalars(item, [...path, i], visit));
}
