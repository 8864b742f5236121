import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { bundleCommand, RECIPE } from '../../scripts/bundle-command.mjs';

// The `svc-emulator` command the tests start in child processes. A checkout runs bin/svc-emulator.js, which loads
// src/ through tsx: tsx's loader hooks resolve and transpile each of some 300 modules on every start, about half
// of a start's CPU time. The tests run the command as the installed package has it: bin/svc-emulator.js as it is
// (it takes its dist/ branch), dist/command/ bundled from src/ by the package's own recipe
// (scripts/bundle-command.mjs, which `npm run build` runs on tsc's dist/), and the package's folders (openapi,
// fixtures, scenarios, ui) and node_modules linked, so every path a module finds from its own place is the one it
// finds in the checkout.
// The layout is made once for the sources as they are (its name is their hash: an edit makes a new one, never a
// stale one), in node_modules/.cache/svc-emulator-cli/. The checkout's own command, through npx, npm start and
// tsx, is test/cli/launcher.test.ts's and the first test of test/cli/start.test.ts's; SVC_TEST_CLI=checkout runs
// every test on it.

const ROOT = new URL('../../', import.meta.url).pathname;

/** The checkout's command: bin/svc-emulator.js running src/ through tsx. */
export const CHECKOUT_BIN = join(ROOT, 'bin/svc-emulator.js');

/** What the layout holds besides dist/: linked, so the command reads the checkout's own files. */
const LINKED = ['openapi', 'fixtures', 'scenarios', 'ui', 'package.json', 'node_modules'];

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) => (entry.isDirectory() ? sources(join(dir, entry.name)) : [join(dir, entry.name)]))
    .sort();
}

function hashOf(files: string[]): string {
  const hash = createHash('sha256').update(RECIPE).update('\0');
  for (const file of files) hash.update(relative(ROOT, file)).update('\0').update(readFileSync(file)).update('\0');
  return hash.digest('hex').slice(0, 20);
}

/** Where layouts are kept: the checkout's node_modules/.cache (like src/cache's), else the temporary folder. */
const home = (): string =>
  existsSync(join(ROOT, 'node_modules')) ? join(ROOT, 'node_modules/.cache/svc-emulator-cli') : join(tmpdir(), `svc-emulator-cli-${process.getuid?.() ?? 'user'}`);

function layout(): string {
  const src = join(ROOT, 'src');
  const files = sources(src);
  const bin = join(ROOT, 'bin/svc-emulator.js');
  // The recipe's own file too: a change to how the bundle is made makes a new layout.
  const dir = join(home(), hashOf([...files, bin, join(ROOT, 'scripts/bundle-command.mjs')]));
  if (existsSync(join(dir, 'bin/svc-emulator.js'))) {
    // Used now: kept by prune() for another day.
    const now = new Date();
    utimesSync(dir, now, now);
    return dir;
  }
  // One worker makes it while the others wait for it (a worker that died making it frees its claim in a minute).
  const claim = `${dir}.making`;
  mkdirSync(home(), { recursive: true });
  let claimed = false;
  for (const until = Date.now() + 120_000; !claimed && Date.now() < until; ) {
    try {
      mkdirSync(claim);
      claimed = true;
    } catch {
      if (existsSync(join(dir, 'bin/svc-emulator.js'))) return dir;
      if (Date.now() - statMs(claim) > 60_000) rmSync(claim, { recursive: true, force: true });
      else Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
    }
  }
  // Made aside and renamed into place, so that no one sees half of it.
  const aside = `${dir}.${process.pid}.${Date.now()}`;
  try {
    if (existsSync(join(dir, 'bin/svc-emulator.js'))) return dir;
    mkdirSync(join(aside, 'bin'), { recursive: true });
    bundleCommand({ modules: src, dist: join(aside, 'dist'), stage: join(aside, 'stage'), tsconfig: join(ROOT, 'tsconfig.json') });
    // Files of src/ other than modules (none today) sit beside their modules, as a build would copy them.
    for (const file of files.filter((f) => !f.endsWith('.ts'))) {
      mkdirSync(join(aside, 'dist', relative(src, file), '..'), { recursive: true });
      copyFileSync(file, join(aside, 'dist', relative(src, file)));
    }
    copyFileSync(bin, join(aside, 'bin/svc-emulator.js'));
    for (const name of LINKED) symlinkSync(join(ROOT, name), join(aside, name));
    try {
      renameSync(aside, dir);
    } catch (err) {
      // Another worker's is in place: the same sources, the same layout.
      if (!existsSync(join(dir, 'bin/svc-emulator.js'))) throw err;
    }
  } finally {
    rmSync(aside, { recursive: true, force: true });
    if (claimed) rmSync(claim, { recursive: true, force: true });
  }
  prune(dir);
  return dir;
}

/** Removes the layouts no run has used for a day (a run beside this one, on other sources, may be using its own). */
function prune(keep: string): void {
  const dayAgo = Date.now() - 24 * 3600_000;
  for (const entry of readdirSync(home(), { withFileTypes: true })) {
    const path = join(home(), entry.name);
    // A layout's folder is touched each time a run starts using it.
    if (path !== keep && entry.isDirectory() && existsSync(join(path, 'bin/svc-emulator.js')) && statMs(path) < dayAgo) {
      rmSync(path, { recursive: true, force: true });
    }
  }
}

/** When `path` was last changed; long ago when it is gone. */
function statMs(path: string): number {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return 0;
  }
}

let made: string | null = null;

/** The bin/svc-emulator.js the tests start: the layout's, made on first use; the checkout's with SVC_TEST_CLI=checkout. */
export function cliBin(): string {
  if (process.env['SVC_TEST_CLI'] === 'checkout') return CHECKOUT_BIN;
  made ??= join(layout(), 'bin/svc-emulator.js');
  return made;
}
