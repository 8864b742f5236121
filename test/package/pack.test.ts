import { execFile, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { cp, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, expect, it } from 'vitest';

// The package as users get it: `npm pack`, installed into an empty folder without dev dependencies, then
// `npx svc-emulator start` and `npx svc-emulator conformance` with no TypeScript toolchain at run time.

const run = promisify(execFile);
const ROOT = new URL('../..', import.meta.url).pathname;
const dirs: string[] = [];
let emulator: ChildProcess | undefined;
afterAll(async () => {
  // npx runs the command under a shell: the whole process group goes, or the emulator outlives the test.
  if (emulator?.pid !== undefined) {
    try {
      process.kill(-emulator.pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

it('installs from npm pack into an empty folder and runs start and conformance without dev dependencies', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-pack-'));
  dirs.push(dir);
  // Packed from a copy, so the build's dist/ never appears under the checkout other tests run from.
  const copy = join(dir, 'source');
  await cp(ROOT, copy, { recursive: true, filter: (src) => !/\/(node_modules|\.git|test-results|dist|\.svc-emulator)(\/|$)/.test(src.slice(ROOT.length - 1)) });
  await symlink(join(ROOT, 'node_modules'), join(copy, 'node_modules'));
  await run('npm', ['pack', '--pack-destination', dir], { cwd: copy });
  const [tarball] = (await readdir(dir)).filter((f) => f.endsWith('.tgz'));
  expect(tarball).toBeDefined();
  const app = join(dir, 'app');
  await run('mkdir', ['-p', app]);
  await writeFile(join(app, 'package.json'), '{"name":"app","version":"1.0.0","private":true}');
  await run('npm', ['install', '--omit=dev', '--no-audit', '--no-fund', '--prefer-offline', join(dir, tarball ?? '')], { cwd: app });
  const installed = await readdir(join(app, 'node_modules'));
  for (const devTool of ['tsx', 'typescript', 'vitest', '@stoplight']) expect(installed).not.toContain(devTool);
  const shipped = await readdir(join(app, 'node_modules', 'svc-emulator'));
  expect(shipped).toEqual(expect.arrayContaining(['bin', 'dist', 'openapi', 'fixtures', 'scenarios']));
  expect(shipped).not.toContain('src');

  emulator = spawn('npx', ['svc-emulator', 'start', '--memory', '--port', '0', '--clock', 'manual', '--admin-token', 'adm', '--allow-insecure-webhooks'], { cwd: app, detached: true });
  const base = await new Promise<string>((resolve, reject) => {
    let out = '';
    emulator?.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (match?.[1]) resolve(match[1]);
    });
    emulator?.once('exit', (code) => reject(new Error(`start exited ${code}: ${out}`)));
  });
  const { stdout } = await run('npx', ['svc-emulator', 'conformance', '--base-url', base, '--api-key', 'sk-emulator-demo', '--admin-url', base, '--admin-token', 'adm', '--budget', '100000'], { cwd: app });
  expect(stdout).toMatch(/^\d+ passed, 0 failed, 0 skipped$/m);
}, 180_000);
