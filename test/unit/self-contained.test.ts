import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

/**
 * The repository stands on its own: a fresh clone has nothing beside it, so no code, test, bench, CI script or
 * document may read a file outside the checkout. This test reads the tree for the two ways a file has reached out
 * before: a path naming the folder beside the repository that holds the service's reference, and a relative
 * address resolved against a module (`new URL('../…', import.meta.url)`) that climbs above the checkout.
 */
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const FOLDERS = ['src', 'test', 'bench', '.ci', 'scripts', 'examples', 'docs', 'bin'];
const TEXT = /\.(?:[cm]?[jt]s|sh|md|json|ya?ml)$|^run$/;

function* filesUnder(dir: string): Generator<string> {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    if (name === 'node_modules' || name.startsWith('.svc-')) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* filesUnder(path);
    else if (TEXT.test(name)) yield path;
  }
}

/** Where `text` reaches outside the checkout, as `file:line: what`. */
export function reachesOutside(file: string, text: string): string[] {
  const found: string[] = [];
  text.split('\n').forEach((line, i) => {
    const where = `${relative(root, file)}:${i + 1}`;
    // Spelled so that this file does not match itself.
    if (line.includes(['..', 'shared', ''].join('/')) || line.includes(['shared', 'reference'].join('/'))) found.push(`${where}: names the folder beside the repository`);
    for (const match of line.matchAll(/new URL\(\s*(['"`])(\.\.\/[^'"`]*)\1\s*,\s*import\.meta\.url/g)) {
      const target = resolve(dirname(file), match[2] as string);
      if (target !== root && !target.startsWith(root + sep)) found.push(`${where}: ${match[2] as string} resolves to ${target}, outside the checkout`);
    }
  });
  return found;
}

it('reads nothing outside the repository from code, tests, benches, CI scripts or documents', () => {
  const files = FOLDERS.flatMap((folder) => [...filesUnder(join(root, folder))]);
  expect(files.length).toBeGreaterThan(100);
  expect(files.flatMap((file) => reachesOutside(file, readFileSync(file, 'utf8')))).toEqual([]);
});

it.each([
  ['the reference folder by name', `readFileSync('${['..', 'shared', 'reference', 'service-api.md'].join('/')}')`],
  ['a module-relative address above the checkout', ['new URL(', "'../../../elsewhere/doc.md', import.meta.url)"].join('')],
])('notices a file that reaches out through %s', (_name, line) => {
  expect(reachesOutside(join(root, 'test', 'unit', 'x.test.ts'), line)).toHaveLength(1);
});
