// Writes the README's list of checks from the code (`npm run docs:checks`); test/readme/check-list.test.ts fails
// when the README's list and the code disagree.
import { readFileSync, writeFileSync } from 'node:fs';
import { checkListMarkdown, withCheckList } from '../src/conformance/check-list.ts';

const path = new URL('../README.md', import.meta.url);
const updated = withCheckList(readFileSync(path, 'utf8'), checkListMarkdown());
if (updated === null) {
  console.error('README.md has no check list markers (src/conformance/check-list.ts CHECK_LIST_MARKERS)');
  process.exit(2);
}
writeFileSync(path, updated);
console.log('README.md: check list written');
