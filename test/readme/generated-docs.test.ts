import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { COMMANDS, controlApiOperations, generatedParts, withGenerated } from '../../scripts/docs-pages.ts';

// The parts of docs/ written from their sources by `npm run docs:checks`: each page must hold what its source
// says now, so the control API's table cannot drift from openapi/admin.yaml nor the CLI page from --help.

const read = (page: string): string => readFileSync(new URL(`../../${page}`, import.meta.url), 'utf8');

it.each(generatedParts().map((part) => [part.name, part.page, part] as const))('%s in %s is as its source says (npm run docs:checks writes it)', (_name, page, part) => {
  const text = read(page);
  expect(withGenerated(text, part.name, part.content()), 'markers present').not.toBeNull();
  expect(withGenerated(text, part.name, part.content())).toBe(text);
});

it('lists every operation of openapi/admin.yaml once in the control API page, with its method and path as the document has them', () => {
  const page = read('docs/reference/control-api.md');
  const rows = [...page.matchAll(/^\| `(GET|POST|PUT|PATCH|DELETE) (\/_emulator[^ ?`]*)/gm)].map((m) => `${m[1]} ${m[2]}`);
  expect(rows.sort()).toEqual(controlApiOperations().sort());
});

it('gives every command `svc-emulator --help` lists a section with its --help in the CLI page', () => {
  const help = execFileSync('node', [new URL('../../bin/svc-emulator.js', import.meta.url).pathname, '--help'], { encoding: 'utf8' });
  const listed = [...(/Commands:\n([\s\S]*?)\n\n/.exec(help)?.[1] ?? '').matchAll(/^ {2}(\S+)/gm)].map((m) => m[1]);
  expect(listed.length).toBeGreaterThan(5);
  expect(COMMANDS).toEqual(listed);
  const page = read('docs/reference/cli.md');
  for (const command of COMMANDS) expect(page).toContain(`## ${command}\n`);
}, 30_000);
