/**
 * The package as `npm pack` builds it (`prepack`: `npm run build`), for the start-up the packed CLI is judged on:
 * a copy of the checkout in a temporary folder with `dist/` compiled, so no `dist/` ever appears in the working
 * tree others run from (test/package/pack.test.ts packs from a copy for the same reason). The copy links the
 * checkout's node_modules. Once built, the copy's `src/` goes, as the package's `files` leave it out:
 * `bin/svc-emulator.js` runs the sources through tsx wherever they are (a checkout), and `dist/` only without them.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const LEFT_OUT = /\/(node_modules|\.git|test-results|dist|coverage|\.svc-emulator)(\/|$)/;

export interface PackedCopy {
  bin: string;
  /** The compiled programmatic API (`dist/index.js`, the package's `main`). */
  index: string;
  /** An empty folder inside the copy's temporary folder, removed with it. */
  scratch: string;
  buildMs: number;
  /** What the build said when it failed in part (type errors still emit: the copy is of a tree others edit). */
  buildWarning: string | null;
  remove(): Promise<void>;
}

export async function buildPackedCopy(): Promise<PackedCopy> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-bench-packed-'));
  const remove = (): Promise<void> => rm(dir, { recursive: true, force: true });
  try {
    const copy = join(dir, 'source');
    await cp(ROOT, copy, { recursive: true, filter: (src) => !LEFT_OUT.test(src.slice(ROOT.length - 1)) });
    await symlink(join(ROOT, 'node_modules'), join(copy, 'node_modules'));
    const started = performance.now();
    let buildWarning: string | null = null;
    try {
      await run('npm', ['run', 'build', '--silent'], { cwd: copy });
    } catch (err) {
      const { stdout = '', message } = err as { stdout?: string; message: string };
      buildWarning = (stdout.trim() || message).split('\n').slice(0, 3).join(' / ');
    }
    const buildMs = performance.now() - started;
    const index = join(copy, 'dist', 'index.js');
    if (!existsSync(join(copy, 'dist', 'command', 'main.js')) || !existsSync(index)) throw new Error(`npm run build left no dist/: ${buildWarning}`);
    await rm(join(copy, 'src'), { recursive: true, force: true });
    await mkdir(join(dir, 'scratch'));
    return { bin: join(copy, 'bin', 'svc-emulator.js'), index, scratch: join(dir, 'scratch'), buildMs, buildWarning, remove };
  } catch (err) {
    await remove();
    throw err;
  }
}
