// The `svc-emulator` command as the package runs it: its modules and the packages they import bundled by esbuild
// into dist/command/ (main.js and the chunks its lazy imports load). Node's loader spends most of a start resolving,
// reading and compiling some 300 modules of ours and 200 of express's, body-parser's and the rest one by one; a
// bundle is a handful of files. `npm run build` and `npm pack` run this after tsc, on dist/; the tests' command
// (test/support/cli-build.ts) runs it on src/ through the same function, so the tests start what the package starts.
//
// What a module finds from its own place stays where it was: each `import.meta.url` is written as the URL the module
// has in dist/ (`new URL('../store/open.js', import.meta.url)` from dist/command/), so the folders it reads
// (openapi/, fixtures/, ...) and the packages it requires lazily (ajv, yaml) are found as from the unbundled module.
// The modules run in the same order, and those imported lazily are still loaded only when imported. libsql stays an
// import (its native binding is found from its own place), in the chunk of the store: the contract-test kit's
// commands, which never open a store, load where the binding cannot.
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSync, version } from 'esbuild';

/** The folder of dist/ the bundle is written to, beside the modules tsc writes. */
const COMMAND_DIR = 'command';

/** The packages left as imports. */
const EXTERNAL = ['libsql'];

/** The oldest Node the package runs on (package.json `engines`). */
const TARGET = 'node20.19';

/** Changing how the bundle is made changes this (test/support/cli-build.ts names its layouts by it). */
export const RECIPE = `esbuild ${version} bundle of cli/main (${TARGET}, esm, split, packages bundled but ${EXTERNAL.join(', ')}), import.meta.url per module; v4`;

const MODULE = /\.(ts|js)$/;

/** The module files under `dir`, sorted: `.ts` sources or tsc's `.js` (declarations and maps are not modules). */
function moduleFiles(dir) {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && MODULE.test(entry.name) && !entry.name.endsWith('.d.ts'))
    .map((entry) => join(entry.parentPath, entry.name))
    .sort();
}

/**
 * Bundles the modules of `modules` (src/, or a dist/ tsc wrote) from their `cli/main` into `<dist>/command/`.
 * `stage` is a new folder for the rewritten modules, removed afterwards: inside the package's folder or a folder
 * beside its node_modules, so the packages resolve from there.
 */
export function bundleCommand({ modules, dist, stage, tsconfig }) {
  const out = join(dist, COMMAND_DIR);
  const files = moduleFiles(modules);
  try {
    for (const file of files) {
      const rel = relative(modules, file);
      if (rel.split(sep)[0] === COMMAND_DIR) continue;
      const text = readFileSync(file, 'utf8');
      // Only `import.meta.url` is given the module's own place; anything else of import.meta would be the chunk's.
      const other = /import\.meta(?!\.url\b)/.exec(text);
      if (other) throw new Error(`${rel}: uses import.meta other than import.meta.url, which the bundle cannot keep per module`);
      const inDist = relative(out, join(dist, rel.replace(MODULE, '.js'))).split(sep).join('/');
      mkdirSync(dirname(join(stage, rel)), { recursive: true });
      writeFileSync(join(stage, rel), text.replaceAll('import.meta.url', `new URL(${JSON.stringify(inDist)}, import.meta.url).href`));
    }
    rmSync(out, { recursive: true, force: true });
    buildSync({
      entryPoints: [join(stage, files.some((file) => file.endsWith('.ts')) ? 'cli/main.ts' : 'cli/main.js')],
      outdir: out,
      entryNames: '[name]',
      chunkNames: 'chunk-[hash]',
      // The comments naming each module's file give its path in src/ (or dist/), not the stage's.
      absWorkingDir: stage,
      bundle: true,
      splitting: true,
      external: EXTERNAL,
      // The packages written as CommonJS require Node's own modules: a require of the chunk's place answers them.
      banner: { js: "import { createRequire as createRequireOfBundle } from 'node:module'; const require = createRequireOfBundle(import.meta.url);" },
      ...(tsconfig === undefined ? {} : { tsconfig }),
      format: 'esm',
      platform: 'node',
      target: TARGET,
      // No keepNames: it wraps every function the modules define, closures made per request included, in a call
      // that names it (2,500 of them), a few percent of a request's CPU and 30 ms of a start. Nothing reads a
      // function's or class's name (errors carry their code); a stack trace may show a name esbuild gave one that
      // two modules share (`page2`).
      logLevel: 'error',
    });
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

// `node scripts/bundle-command.mjs`: bundles the package's dist/, which tsc has just written.
if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const dist = join(root, 'dist');
  // Staged where the packages resolve as from the package's own folder.
  bundleCommand({ modules: dist, dist, stage: join(root, 'node_modules', '.cache', `svc-emulator-bundle-${process.pid}-${Date.now()}`) });
}
