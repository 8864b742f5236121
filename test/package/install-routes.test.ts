import { execFile, spawn } from 'node:child_process';
import { cp, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, expect, it } from 'vitest';

// The ways the README says the command can be had, besides the tarball (pack.test.ts): in a clone, and as a git
// dependency, which npm builds with the package's `prepare` script before packing it.

const run = promisify(execFile);
const ROOT = new URL('../..', import.meta.url).pathname;
const { version } = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string };
const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

/** A copy of this checkout's files as they are now, without what git ignores (a fresh clone's). */
async function cloneOf(dir: string): Promise<string> {
  const clone = join(dir, 'repo');
  await cp(ROOT, clone, { recursive: true, filter: (src) => !/\/(node_modules|\.git|test-results|dist|\.svc-emulator)(\/|$)/.test(src.slice(ROOT.length - 1)) });
  return clone;
}

it('runs as npx svc-emulator in a clone from its sources, building nothing on install or on the first npx', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-clone-'));
  dirs.push(dir);
  const clone = await cloneOf(dir);
  await symlink(join(ROOT, 'node_modules'), join(clone, 'node_modules'));
  // What `npm ci` runs after installing (prepare), typed in the clone: nothing to build, the sources run.
  await run('npm', ['run', 'prepare'], { cwd: clone, env: { ...process.env, INIT_CWD: clone } });
  // npx links the clone into its cache (a new one for this path) and runs its prepare there: it builds nothing either.
  const { stdout } = await run('npx', ['--no-install', 'svc-emulator', '--version'], { cwd: join(clone, 'src'), timeout: 60_000 });
  expect(stdout.trim()).toBe(version);
  await expect(readdir(join(clone, 'dist'))).rejects.toThrow(/ENOENT/);
}, 120_000);

it('installs as a git dependency, built by npm, and runs without dev dependencies', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-git-'));
  dirs.push(dir);
  // A repository of this checkout's files as they are now (committed or not).
  const repo = await cloneOf(dir);
  const git = (...args: string[]): Promise<unknown> => run('git', ['-c', 'user.name=test', '-c', 'user.email=test@example.com', ...args], { cwd: repo });
  await git('init', '-q');
  await git('add', '-A');
  await git('commit', '-qm', 'snapshot');

  const app = join(dir, 'app');
  await run('mkdir', ['-p', app]);
  await writeFile(join(app, 'package.json'), '{"name":"app","version":"1.0.0","private":true}');
  // npm clones it, installs its dev dependencies (from the cache when it can) and runs `prepare`, which builds
  // dist/ here: npm was typed in another folder (scripts/prepare.mjs).
  await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', `git+file://${repo}`], { cwd: app, timeout: 240_000 });
  const shipped = await readdir(join(app, 'node_modules', 'svc-emulator'));
  expect(shipped).toEqual(expect.arrayContaining(['bin', 'dist', 'openapi', 'fixtures', 'scenarios']));
  expect(shipped).not.toContain('src');
  const installed = await readdir(join(app, 'node_modules'));
  for (const devTool of ['tsx', 'typescript', 'vitest']) expect(installed).not.toContain(devTool);
  const { stdout } = await run('npx', ['--no-install', 'svc-emulator', '--version'], { cwd: app });
  expect(stdout.trim()).toBe(version);
  // The compiled command starts and answers.
  const emulator = spawn('node', [join(app, 'node_modules', 'svc-emulator', 'bin', 'svc-emulator.js'), 'start', '--memory', '--port', '0']);
  try {
    const base = await new Promise<string>((resolve, reject) => {
      let out = '';
      emulator.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        const match = /listening on (http:\/\/\S+)/.exec(out);
        if (match?.[1]) resolve(match[1]);
      });
      emulator.once('exit', (code) => reject(new Error(`start exited ${code}: ${out}`)));
    });
    const health = await fetch(`${base}/_emulator/health`);
    expect(health.status).toBe(200);
  } finally {
    emulator.kill('SIGKILL');
  }
}, 300_000);
