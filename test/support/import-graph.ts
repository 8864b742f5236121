import { join } from 'node:path';
import { buildSync } from 'esbuild';

// What a module of src/ loads, read from esbuild's metafile of a bundle made in memory (nothing written): the
// kit's independence from the store's native binding and the start's independence from the libraries it loads
// only on first use are both facts of this graph.

const ROOT = new URL('../../', import.meta.url).pathname;

/**
 * Every module `entry` (a path from the checkout's root) loads: static imports, and dynamic ones too when
 * `dynamic`; each mapped to the module that imports it. Packages appear by their files under node_modules/.
 */
export function loaded(entry: string, dynamic: boolean): Map<string, string | null> {
  const { metafile } = buildSync({
    entryPoints: [entry],
    absWorkingDir: ROOT,
    bundle: true,
    write: false,
    metafile: true,
    platform: 'node',
    format: 'esm',
    external: ['libsql', '@libsql/*'],
    tsconfig: join(ROOT, 'tsconfig.json'),
    outdir: join(ROOT, 'node_modules/.cache/import-graph'),
    logLevel: 'silent',
  });
  const from = new Map<string, string | null>([[entry, null]]);
  const queue = [entry];
  for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
    for (const { path, kind } of metafile.inputs[file]?.imports ?? []) {
      if ((kind === 'dynamic-import' && !dynamic) || from.has(path)) continue;
      from.set(path, file);
      queue.push(path);
    }
  }
  return from;
}

/** The chain of imports from the entry to `module`. */
export const chain = (from: Map<string, string | null>, module: string): string => {
  const steps: string[] = [];
  for (let at: string | null | undefined = module; at; at = from.get(at)) steps.unshift(at);
  return steps.join(' -> ');
};
