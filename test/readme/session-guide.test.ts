import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { fences, ROOT } from './doc-blocks.ts';

// The parallel-sessions guide shows pieces of the suites its shell blocks run (examples/sessions/): each piece it
// shows must be in those files as it shows it, so the page cannot drift from what the docs test ran.

const PAGE = 'docs/guides/parallel-sessions.md';
const filesOf = (dir: string, ext: string): string[] =>
  readdirSync(join(ROOT, dir))
    .filter((name) => name.endsWith(ext))
    .map((name) => readFileSync(join(ROOT, dir, name), 'utf8'));

it.each([
  ['python', 'examples/sessions/python', '.py'],
  ['ts', 'examples/sessions/vitest', '.ts'],
])('shows %s pieces that are, line for line, in %s', (lang, dir, ext) => {
  const shown = fences(readFileSync(join(ROOT, PAGE), 'utf8')).filter((fence) => fence.lang === lang);
  expect(shown.length).toBeGreaterThan(0);
  const sources = filesOf(dir, ext);
  for (const piece of shown) expect(sources.some((source) => source.includes(piece.body)), piece.body).toBe(true);
});
