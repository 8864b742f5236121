import { execFile } from 'node:child_process';
import { cp, mkdir, readdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'vitest';

const run = promisify(execFile);
const ROOT = new URL('../..', import.meta.url).pathname;

/**
 * Packs the package and installs the tarball, without dev dependencies, into an empty project `app` in `dir`
 * (its package.json `manifest`). Packed from a copy, so the build's dist/ never appears under the checkout other
 * tests run from. Answers the project's folder.
 */
export async function installPacked(dir: string, manifest: Record<string, unknown>): Promise<string> {
  const copy = join(dir, 'source');
  await cp(ROOT, copy, { recursive: true, filter: (src) => !/\/(node_modules|\.git|test-results|dist|\.svc-emulator)(\/|$)/.test(src.slice(ROOT.length - 1)) });
  await symlink(join(ROOT, 'node_modules'), join(copy, 'node_modules'));
  await run('npm', ['pack', '--pack-destination', dir], { cwd: copy });
  const [tarball] = (await readdir(dir)).filter((f) => f.endsWith('.tgz'));
  expect(tarball).toBeDefined();
  const app = join(dir, 'app');
  await mkdir(app, { recursive: true });
  await writeFile(join(app, 'package.json'), JSON.stringify(manifest));
  await run('npm', ['install', '--omit=dev', '--no-audit', '--no-fund', '--prefer-offline', join(dir, tarball ?? '')], { cwd: app });
  return app;
}
