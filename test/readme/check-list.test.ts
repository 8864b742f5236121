import { readFile } from 'node:fs/promises';
import { expect, it } from 'vitest';
import { checkListMarkdown, withCheckList } from '../../src/conformance/check-list.ts';
import { ALL_CHECKS, BEHAVIOUR_CHECKS } from '../../src/conformance/index.ts';

const readme = await readFile(new URL('../../README.md', import.meta.url), 'utf8');

it("lists every check and rule by group in the README, as the code has them (npm run docs:checks writes it)", () => {
  expect(withCheckList(readme, checkListMarkdown())).toBe(readme);
  for (const { id } of [...ALL_CHECKS, ...BEHAVIOUR_CHECKS]) expect(readme).toContain(`| \`${id}\` |`);
});
