import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * The pages a reader finds (README.md, CONTRIBUTING.md, examples/README.md, docs/**), and their shell blocks.
 * A block is a whole script, run as a user's script or CI step runs it. One that cannot run here (it needs the real
 * service, or it is the test suite itself) says so on the line above its fence: `<!-- docs-test: skip: REASON -->`.
 * A `text` block right after a runnable block (blank lines between at most) is what it prints: each line, in order.
 */

export const ROOT = new URL('../..', import.meta.url).pathname;

export interface Block {
  /** `docs/guides/qa-scenarios.md:42`: the page and the line of the opening fence. */
  where: string;
  page: string;
  script: string;
  skip: string | null;
  expected: string[];
}

export function docPages(): string[] {
  const under = (dir: string): string[] =>
    readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory() ? under(join(dir, entry.name)) : entry.name.endsWith('.md') ? [join(dir, entry.name)] : [],
    );
  return ['README.md', 'CONTRIBUTING.md', 'examples/README.md', ...under('docs')].sort();
}

const SKIP = /^<!-- docs-test: skip: (.+?) -->$/;

/** Every fenced block of a page: its language, body (indent removed), the line before it and the line of its fence. */
export function fences(text: string): { lang: string; body: string; before: string; line: number; after: number }[] {
  const lines = text.split('\n');
  const found: { lang: string; body: string; before: string; line: number; after: number }[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)```(\S*)\s*$/.exec(lines[i] ?? '');
    if (!open) continue;
    const indent = open[1] ?? '';
    let end = i + 1;
    while (end < lines.length && (lines[end] ?? '').trim() !== '```') end++;
    let before = i - 1;
    while (before >= 0 && (lines[before] ?? '').trim() === '') before--;
    found.push({
      lang: open[2] ?? '',
      body: lines.slice(i + 1, end).map((line) => (line.startsWith(indent) ? line.slice(indent.length) : line)).join('\n'),
      before: (lines[before] ?? '').trim(),
      line: i + 1,
      after: end + 1,
    });
    i = end;
  }
  return found;
}

export function blocksOf(page: string): Block[] {
  const text = readFileSync(join(ROOT, page), 'utf8');
  const all = fences(text);
  const blocks: Block[] = [];
  all.forEach((fence, index) => {
    if (fence.lang !== 'sh' && fence.lang !== 'bash') return;
    const next = all[index + 1];
    const between = next ? text.split('\n').slice(fence.after, next.line - 1) : [];
    const output = next && next.lang === 'text' && between.every((line) => line.trim() === '') ? next.body : '';
    blocks.push({
      where: `${relative('.', page)}:${fence.line}`,
      page,
      script: fence.body,
      skip: SKIP.exec(fence.before)?.[1] ?? null,
      expected: output.split('\n').map((line) => line.trimEnd()).filter((line) => line !== ''),
    });
  });
  return blocks;
}
