import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, expect, it } from 'vitest';

// `npm pack` in a clone leaves the clone as it was: its own dist/ (a build, or none) is there again afterwards.
// Packed from copies of the checkout, as test/package/pack.test.ts does, so the checkout's tree is never touched.

const run = promisify(execFile);
const ROOT = new URL('../..', import.meta.url).pathname;
const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

async function clone(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-pack-tree-'));
  dirs.push(dir);
  const copy = join(dir, 'source');
  await cp(ROOT, copy, { recursive: true, filter: (src) => !/\/(node_modules|\.git|test-results|dist|\.svc-emulator|\.dist-before-pack)(\/|$)/.test(src.slice(ROOT.length - 1)) });
  await symlink(join(ROOT, 'node_modules'), join(copy, 'node_modules'));
  return copy;
}

it('keeps the clone\'s own dist/ through npm pack, and leaves none where there was none', async () => {
  const withBuild = await clone();
  await mkdir(join(withBuild, 'dist'));
  await writeFile(join(withBuild, 'dist', 'mine.txt'), 'a build of my own');
  await run('npm', ['pack', '--pack-destination', join(withBuild, '..')], { cwd: withBuild });
  expect(await readdir(join(withBuild, 'dist'))).toEqual(['mine.txt']);
  expect(await readFile(join(withBuild, 'dist', 'mine.txt'), 'utf8')).toBe('a build of my own');
  expect(existsSync(join(withBuild, '.dist-before-pack'))).toBe(false);
  // The tarball itself has the fresh build, not the clone's file.
  const [tarball] = (await readdir(join(withBuild, '..'))).filter((f) => f.endsWith('.tgz'));
  const { stdout: listed } = await run('tar', ['-tzf', join(withBuild, '..', tarball ?? '')]);
  expect(listed).toContain('package/dist/index.js');
  expect(listed).not.toContain('mine.txt');

  const without = await clone();
  await run('npm', ['pack', '--dry-run'], { cwd: without });
  expect(existsSync(join(without, 'dist'))).toBe(false);
}, 240_000);
