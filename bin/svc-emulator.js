#!/usr/bin/env node
// The installed package runs its compiled JavaScript (dist/, built by `npm pack`); a checkout without a build
// runs the TypeScript sources through tsx, a development dependency.
import { existsSync } from 'node:fs';

const compiled = new URL('../dist/cli/main.js', import.meta.url);
if (existsSync(compiled)) {
  await import(compiled.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli/main.ts');
}
