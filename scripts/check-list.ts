// Writes the generated parts of docs/ (`npm run docs:checks`): the list of conformance checks from the code,
// the control API's operations from openapi/admin.yaml, and each command's --help. test/readme/check-list.test.ts
// and test/readme/generated-docs.test.ts fail when a page and its source disagree.
import { readFileSync, writeFileSync } from 'node:fs';
import { CHECK_LIST_PAGE, checkListMarkdown, withCheckList } from '../src/conformance/check-list.ts';
import { generatedParts, withGenerated } from './docs-pages.ts';

const root = new URL('..', import.meta.url);
const pages = new Map<string, string>();
const read = (page: string): string => pages.get(page) ?? readFileSync(new URL(page, root), 'utf8');
let failed = false;

const list = withCheckList(read(CHECK_LIST_PAGE), checkListMarkdown());
if (list === null) {
  console.error(`${CHECK_LIST_PAGE} has no check list markers (src/conformance/check-list.ts CHECK_LIST_MARKERS)`);
  failed = true;
} else pages.set(CHECK_LIST_PAGE, list);

for (const part of generatedParts()) {
  const updated = withGenerated(read(part.page), part.name, part.content());
  if (updated === null) {
    console.error(`${part.page} has no markers for the generated part '${part.name}' (scripts/docs-pages.ts)`);
    failed = true;
  } else pages.set(part.page, updated);
}

for (const [page, text] of pages) {
  writeFileSync(new URL(page, root), text);
  console.log(`${page}: generated parts written`);
}
if (failed) process.exit(2);
