#!/usr/bin/env node
/**
 * The docs' code cannot drift from the code: every ```ts block (and ```js block) of the guides
 * below is written out as its own module and type-checked by tsc against the package's public
 * entries ('switchyard-gateway', 'switchyard-gateway/kit', 'switchyard-gateway/kit/testing'),
 * resolved through package.json's `exports` (the "switchyard-source" condition: src/), exactly as
 * a plugin outside this repository imports them. A failing block is reported as doc:line:column.
 *
 * Each block is its own module, named after the doc and line; a block that is one file of a
 * plugin folder the doc builds up names it in its info string, ```ts file=acme/index.ts, so that
 * the doc's next block can import it (`import plugin from './index.ts'` in acme/acme.test.ts).
 * A block that is deliberately a fragment (not a whole module) says so, ```ts fragment, and is
 * only counted. Keep them few.
 *
 *   node scripts/check-docs.mjs [file.md ...]      (default: the guides below; run by `npm run check`)
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DOCS = ['README.md', 'CONTRIBUTING.md', 'docs/plugins.md'];
const LANGUAGES = { ts: '.ts', typescript: '.ts', js: '.mjs', javascript: '.mjs' };

/** The fenced code blocks of a Markdown text: language, info string, first content line (1-based), text. */
export function codeBlocks(markdown) {
  const blocks = [];
  let open;
  markdown.split('\n').forEach((line, i) => {
    const fence = /^(\s*)(`{3,})\s*([\w-]*)\s*(.*)$/.exec(line);
    if (!open) {
      if (fence) open = { indent: fence[1], ticks: fence[2], lang: fence[3].toLowerCase(), info: fence[4].trim(), line: i + 2, lines: [] };
    } else if (fence && fence[2].length >= open.ticks.length && !fence[3] && !fence[4]) {
      blocks.push({ lang: open.lang, info: open.info, line: open.line, text: open.lines.join('\n') });
      open = undefined;
    } else {
      open.lines.push(line.startsWith(open.indent) ? line.slice(open.indent.length) : line);
    }
  });
  if (open) throw new Error(`unclosed code block opened at line ${open.line - 1}`);
  return blocks;
}

/** A doc that cannot be checked as written (named `doc:line`). */
class DocError extends Error {}

/**
 * Writes the checked blocks of `docs` into `work`, one folder per doc; returns where each file
 * came from (its path in `work` → doc and first line) and how many blocks are marked fragments.
 */
function writeBlocks(docs, work) {
  const origin = new Map();
  let fragments = 0;
  for (const doc of docs) {
    const file = path.resolve(ROOT, doc);
    const shown = path.relative(ROOT, file).startsWith('..') ? file : path.relative(ROOT, file);
    let blocks;
    try {
      blocks = codeBlocks(readFileSync(file, 'utf8'));
    } catch (err) {
      throw new DocError(`${shown}: ${err.message}`);
    }
    const folder = shown.replace(/[^\w.-]+/g, '_');
    for (const block of blocks) {
      const ext = LANGUAGES[block.lang];
      if (!ext) continue;
      if (/\bfragment\b/.test(block.info)) {
        fragments++;
        continue;
      }
      const named = /(?:^|\s)file=(\S+)/.exec(block.info)?.[1];
      if (named && (path.isAbsolute(named) || named.split('/').includes('..'))) throw new DocError(`${shown}:${block.line - 1}: file=${named} must be a relative path inside the doc's folder`);
      const name = path.join(folder, named ?? `L${block.line}${ext}`);
      if (origin.has(name)) throw new DocError(`${shown}:${block.line - 1}: file=${named} is named twice`);
      mkdirSync(path.dirname(path.join(work, name)), { recursive: true });
      writeFileSync(path.join(work, name), `${block.text}\n`);
      origin.set(name, { doc: shown, line: block.line });
    }
  }
  return { origin, fragments };
}

/** tsc over the written blocks; its diagnostics as `doc:line:col: message`. */
function typecheck(work, origin) {
  const root = JSON.parse(readFileSync(path.join(ROOT, 'tsconfig.json'), 'utf8')).compilerOptions;
  const tsconfig = {
    compilerOptions: {
      ...root,
      // Examples may name a value they do not go on to use (`const { text, finishes } = ...`).
      noUnusedLocals: false,
      allowJs: true,
      checkJs: true,
      typeRoots: [path.join(ROOT, 'node_modules/@types')],
    },
    files: [...origin.keys()],
  };
  writeFileSync(path.join(work, 'tsconfig.json'), JSON.stringify(tsconfig, null, 2));
  const tsc = spawnSync(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', path.join(work, 'tsconfig.json'), '--pretty', 'false'], { cwd: work, encoding: 'utf8' });
  if (tsc.error) throw tsc.error;
  // tsc: `file(line,col): error TSnnnn: message`, continuation lines indented. Reported in doc order.
  const found = [];
  for (const line of `${tsc.stdout}${tsc.stderr}`.split('\n')) {
    if (!line.trim()) continue;
    const at = /^(.+?)\((\d+),(\d+)\): (.*)$/.exec(line);
    const from = at && origin.get(path.relative(work, path.resolve(work, at[1])));
    if (from) found.push({ doc: from.doc, line: from.line + Number(at[2]) - 1, col: Number(at[3]), text: at[4] });
    else if (found.length && /^\s/.test(line)) found[found.length - 1].text += `\n${line}`;
    else found.push({ doc: '~', line: 0, col: 0, text: line });
  }
  found.sort((a, b) => a.doc.localeCompare(b.doc) || a.line - b.line || a.col - b.col);
  const problems = found.map((p) => (p.line ? `${p.doc}:${p.line}:${p.col}: ${p.text}` : p.text));
  if (tsc.status !== 0 && problems.length === 0) problems.push(`tsc exited with ${tsc.status} and no diagnostics`);
  return problems;
}

/**
 * Type-checks the code blocks of `docs` (paths relative to the repository, or absolute).
 * Returns the problems as `doc:line:col: message` lines (none when all is well) and counts.
 */
export function checkDocs(docs = DOCS) {
  // Inside the repository, so that the package resolves itself by name and node_modules is found;
  // one folder per run, so that two checks at once do not share one.
  const work = path.join(ROOT, `node_modules/.cache/check-docs-${process.pid}`);
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  try {
    const { origin, fragments } = writeBlocks(docs, work);
    const problems = origin.size ? typecheck(work, origin) : [];
    return { problems, checked: origin.size, fragments };
  } catch (err) {
    if (err instanceof DocError) return { problems: [err.message], checked: 0, fragments: 0 };
    throw err;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const docs = process.argv.slice(2);
  const { problems, checked, fragments } = checkDocs(docs.length ? docs : DOCS);
  if (problems.length) {
    console.error(`docs: ${problems.length} problem(s) in the code blocks (fix the docs against the current code):\n${problems.join('\n')}`);
    process.exit(1);
  }
  console.log(`docs: ${checked} code block(s) type-check against the public entries${fragments ? `, ${fragments} marked fragment` : ''}`);
}
