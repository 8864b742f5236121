#!/usr/bin/env node
// A checkout runs its TypeScript sources through tsx (a development dependency), so an edit needs no build. An
// installed package (from the registry, a tarball or a git dependency, whose `files` leave src/ out) runs the
// command bundled into dist/command/ when it was packed (scripts/bundle-command.mjs). `npx svc-emulator` in a
// clone runs the clone too: npm links it into its npx cache (and runs its `prepare`, which builds nothing there:
// scripts/prepare.mjs).
import { existsSync } from 'node:fs';

const source = new URL('../src/cli/main.ts', import.meta.url);
const compiled = new URL('../dist/command/main.js', import.meta.url);
const tsx = existsSync(source) ? await import('tsx/esm/api').catch(() => null) : null;
if (tsx) {
  tsx.register();
  await import(source.href);
} else if (existsSync(compiled)) {
  await import(compiled.href);
} else {
  console.error('svc-emulator: neither dist/ (npm run build) nor src/ with tsx (npm ci) is here: reinstall the package');
  process.exit(2);
}
