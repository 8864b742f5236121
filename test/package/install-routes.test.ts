import { execFile, spawn } from 'node:child_process';
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
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

it('runs as npx svc-emulator in a clone with its dependencies installed', async () => {
  const { stdout } = await run('npx', ['--no-install', 'svc-emulator', '--version'], { cwd: ROOT });
  expect(stdout.trim()).toBe(version);
}, 60_000);

it('installs as a git dependency, built by npm, and runs without dev dependencies', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-git-'));
  dirs.push(dir);
  // A repository of this checkout's files as they are now (committed or not), without what git ignores.
  const repo = join(dir, 'repo');
  await cp(ROOT, repo, { recursive: true, filter: (src) => !/\/(node_modules|\.git|test-results|dist|\.svc-emulator)(\/|$)/.test(src.slice(ROOT.length - 1)) });
  const git = (...args: string[]): Promise<unknown> => run('git', ['-c', 'user.name=test', '-c', 'user.email=test@example.com', ...args], { cwd: repo });
  await git('init', '-q');
  await git('add', '-A');
  await git('commit', '-qm', 'snapshot');

  const app = join(dir, 'app');
  await run('mkdir', ['-p', app]);
  await writeFile(join(app, 'package.json'), '{"name":"app","version":"1.0.0","private":true}');
  // npm clones it, installs its dev dependencies (from the cache when it can) and runs `prepare` to build dist/.
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
