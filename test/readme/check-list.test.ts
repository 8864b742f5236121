import { readFile } from 'node:fs/promises';
import { expect, it } from 'vitest';
import { CHECK_LIST_PAGE, checkListMarkdown, withCheckList } from '../../src/conformance/check-list.ts';
import { ALL_CHECKS, BEHAVIOUR_CHECKS } from '../../src/conformance/index.ts';

const page = await readFile(new URL(`../../${CHECK_LIST_PAGE}`, import.meta.url), 'utf8');

it(`lists every check and rule by group in ${CHECK_LIST_PAGE}, as the code has them (npm run docs:checks writes it)`, () => {
  expect(withCheckList(page, checkListMarkdown())).toBe(page);
  for (const { id } of [...ALL_CHECKS, ...BEHAVIOUR_CHECKS]) expect(page).toContain(`| \`${id}\` |`);
});
