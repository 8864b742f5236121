import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { expect, it } from 'vitest';
import { docPages, fences, ROOT } from './doc-blocks.ts';

// The README and docs/ link to each other and into the repository: every relative link must reach a file, and
// every #anchor a heading of its page (GitHub's anchors: lower case, punctuation dropped, spaces as hyphens). The
// pages stand on their own: no link leaves the repository by a relative path.

const slug = (heading: string): string =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');

function anchors(page: string): Set<string> {
  const text = readFileSync(join(ROOT, page), 'utf8');
  const inCode = new Set(fences(text).flatMap((f) => Array.from({ length: f.body.split('\n').length }, (_, i) => f.line + 1 + i)));
  const found = new Set<string>();
  text.split('\n').forEach((line, i) => {
    const heading = /^#{1,6} (.+)$/.exec(line);
    if (heading && !inCode.has(i + 1)) found.add(slug(heading[1] ?? ''));
  });
  return found;
}

function links(page: string): { target: string; line: number }[] {
  const text = readFileSync(join(ROOT, page), 'utf8');
  const inCode = new Set(fences(text).flatMap((f) => Array.from({ length: f.body.split('\n').length + 2 }, (_, i) => f.line + i)));
  return text.split('\n').flatMap((line, i) =>
    inCode.has(i + 1) ? [] : [...line.replace(/`[^`]*`/g, '').matchAll(/\]\(([^)\s]+)\)/g)].map((m) => ({ target: m[1] ?? '', line: i + 1 })),
  );
}

it.each(docPages())('%s: every relative link reaches a file in the repository, and every anchor a heading', (page) => {
  const broken: string[] = [];
  for (const { target, line } of links(page)) {
    if (/^[a-z]+:/.test(target)) continue;
    const [path = '', anchor] = target.split('#');
    const file = path === '' ? page : normalize(join(dirname(page), path));
    if (file.startsWith('..')) {
      broken.push(`${page}:${line} ${target}: outside the repository`);
      continue;
    }
    if (!existsSync(join(ROOT, file))) {
      broken.push(`${page}:${line} ${target}: no such file`);
      continue;
    }
    if (anchor !== undefined && file.endsWith('.md') && statSync(join(ROOT, file)).isFile() && !anchors(file).has(anchor)) {
      broken.push(`${page}:${line} ${target}: no heading #${anchor} in ${file}`);
    }
  }
  expect(broken).toEqual([]);
});

it('keeps the README a front door: under 200 lines, two quick-start commands, a link to the emulator-defined behaviour', () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  expect(readme.split('\n').length).toBeLessThanOrEqual(200);
  const quickStart = /## Quick start\n[\s\S]*?```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
  expect(quickStart.split('\n').filter((line) => line.trim() !== '').map((line) => line.split('#')[0]?.trim())).toEqual(['npm start', 'npm test']);
  expect(readme).toContain('[Emulator-defined behaviour](docs/reference/emulator-defined.md)');
});

it('holds every page to the repository: no page reads outside it', () => {
  for (const page of docPages()) expect(readFileSync(join(ROOT, page), 'utf8'), page).not.toMatch(/\.\.\/shared|\/work\//);
});
