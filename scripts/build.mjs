// `npm run build` (and `npm pack`'s prepack, scripts/pack-dist.mjs): what the package runs, made from src/.
// 1. tsc writes dist/ (the programmatic API, its declarations, and the modules the bundle is made of);
// 2. the `svc-emulator` command is bundled into dist/command/ (scripts/bundle-command.mjs);
// 3. what the package's own files derive is written to dist/derived/ (src/cache/derived.ts reads it first): an
//    emulator is created once, from the built API, with its cache there, so a fresh install's first start parses
//    neither OpenAPI document nor the scenario library.
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const node = (args, env = {}) => execFileSync(process.execPath, args, { cwd: root, stdio: 'inherit', env: { ...process.env, ...env } });

node([join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json']);
node([join(root, 'scripts/bundle-command.mjs')]);
const derivedDir = join(root, 'dist', 'derived');
rmSync(derivedDir, { recursive: true, force: true });
const derive = "const { createEmulator } = await import('./dist/index.js'); const e = await createEmulator({ log: () => undefined }); await e.close();";
node(['--input-type=module', '-e', derive], { SVC_EMULATOR_CACHE_DIR: derivedDir });
