import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { expect, it } from 'vitest';

/**
 * The two dependency rules of eslint.config.js (issue 27) run on small made-up modules, so a change to the config
 * cannot switch them off unnoticed. The modules are linted as text under a path in src/ that no file has: nothing is
 * written to the tree. The cycles they close go through real modules, along a dependency that is the architecture
 * itself: a repository (src/tasks/records.ts) reads and writes through the store (src/store).
 */
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const eslint = new ESLint({ cwd: root });

async function problems(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: join(root, file) });
  return (result?.messages ?? []).map((m) => `${m.ruleId ?? 'parse'}: ${m.message}`);
}

const localRules = (found: string[]): string[] => found.filter((p) => p.startsWith('local/'));

it.each([
  ['a value import', "import { tasksRepo } from '../tasks/index.ts';\nexport const made = tasksRepo;\n"],
  ['a type-only import', "import type { TasksRepo } from '../tasks/index.ts';\nexport type Made = TasksRepo;\n"],
  ['a re-export', "export type { TasksRepo } from '../tasks/index.ts';\n"],
])('fails an import cycle closed by %s', async (_name, code) => {
  const found = await problems('src/store/lint-probe.ts', code);
  // The probe is not imported by anything: only a module the store's index loads closes a cycle through it.
  expect(localRules(found)).toEqual([]);
  const cyclic = await problems('src/store/index.ts', code);
  expect(localRules(cyclic)).toEqual([expect.stringMatching(/^local\/no-cycle: Import cycle .*src\/store\/index\.ts → src\/tasks\/index\.ts → .*src\/store\/index\.ts/)]);
});

it('fails an import from another folder that reaches past its index.ts', async () => {
  const found = await problems('src/http/lint-probe.ts', "import type { StoredTask } from '../tasks/records.ts';\nexport type Seen = StoredTask;\n");
  expect(localRules(found)).toEqual(["local/index-only: Import '../tasks/records.ts' through src/tasks/index.ts: another folder's files are its own."]);
});

it.each([
  ['through the other folder’s index.ts', 'src/http/lint-probe.ts', "import type { StoredTask } from '../tasks/index.ts';\nexport type Seen = StoredTask;\n"],
  ['of a file in its own folder', 'src/tasks/lint-probe.ts', "import type { StoredTask } from './records.ts';\nexport type Seen = StoredTask;\n"],
])('lets a module import %s', async (_name, file, code) => {
  expect(await problems(file, code)).toEqual([]);
});
