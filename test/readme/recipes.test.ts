import { execFileSync, spawn } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { required } from '../support/required-tools.ts';

// The README's Recipes, run as a user pastes them: each recipe is the section's start block plus the recipe's own
// shell blocks, in one bash, and the text block under it is what it must print (each line, in order). Only the
// ports change (two free ones for 4010 and 4020; the emulator's through SVC_EMULATOR_PORT), and `npx svc-emulator` is this checkout's command.

const ROOT = new URL('../..', import.meta.url).pathname;
const has = (tool: string): boolean => {
  try {
    execFileSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};
// .ci/run installs jq; a machine without it skips these, saying why.
const missing = ['curl', 'jq'].filter((tool) => !has(tool));
it('has curl and jq where the run requires them (SVC_TEST_REQUIRE: CI), so the recipes cannot pass by skipping', () => {
  expect(missing.filter(required), 'required but missing').toEqual([]);
});

interface Recipe {
  title: string;
  script: string;
  expected: string[];
}

function recipesOf(readme: string): Recipe[] {
  const section = /\n## Recipes\n([\s\S]*?)\n## /.exec(readme)?.[1];
  if (!section) throw new Error('README has no Recipes section');
  const blocks = (text: string, lang: string): string[] =>
    [...text.matchAll(new RegExp('```' + lang + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1] ?? '');
  const [intro = '', ...parts] = section.split(/\n### /);
  const [setup] = blocks(intro, 'sh');
  if (!setup) throw new Error('the Recipes section starts with no sh block');
  return parts.map((part) => ({
    title: part.slice(0, part.indexOf('\n')),
    script: [setup, ...blocks(part, 'sh')].join('\n'),
    expected: blocks(part, 'text').join('').split('\n').map((line) => line.trimEnd()).filter((line) => line !== ''),
  }));
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

async function run(recipe: Recipe): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-recipe-'));
  dirs.push(dir);
  // `exec`: the background job is the emulator itself, so the recipes' `kill %1` stops it as it would npx's.
  await writeFile(join(dir, 'svc-emulator'), `#!/bin/sh\nexec node ${JSON.stringify(join(ROOT, 'bin/svc-emulator.js'))} "$@"\n`);
  await chmod(join(dir, 'svc-emulator'), 0o755);
  const [emulatorPort, receiverPort] = [await freePort(), await freePort()];
  const script = recipe.script
    .replaceAll('npx svc-emulator', 'svc-emulator')
    .replace(/\b4010\b/g, String(emulatorPort))
    .replace(/\b4020\b/g, String(receiverPort));
  const child = spawn('bash', ['-e', '-o', 'pipefail', '-c', script], {
    cwd: dir,
    detached: true,
    // The start commands name no port: the default comes from the environment, as a user's own could.
    env: { ...process.env, PATH: `${dir}:${process.env['PATH'] ?? ''}`, SVC_EMULATOR_PORT: String(emulatorPort) },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  // A recipe that hangs (an emulator that never answers its health check) ends here, with what it printed.
  const timer = setTimeout(() => kill(child.pid), 60_000);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  clearTimeout(timer);
  // The recipe leaves the emulator and the receiver running, as in a terminal: they go with the process group.
  kill(child.pid);
  return { code, stdout, stderr };
}

function kill(pid: number | undefined): void {
  try {
    if (pid !== undefined) process.kill(-pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
const recipes = recipesOf(readme);

describe.skipIf(missing.length > 0)(`README recipes${missing.length > 0 ? ` (skipped: ${missing.join(' and ')} not installed)` : ''}`, () => {
  it('has the recipes the README promises, each with the output it prints', () => {
    expect(recipes.map((r) => r.title)).toEqual([
      'A video task that times out, and a receiver that fails twice',
      'A task that fails, and its refund',
      'Rate and concurrency limits',
      'An error in the middle of a stream',
      'A prepared state',
    ]);
    for (const recipe of recipes) expect(recipe.expected.length, recipe.title).toBeGreaterThan(0);
  });

  for (const recipe of recipes) {
    it(recipe.title, async () => {
      const { code, stdout, stderr } = await run(recipe);
      expect(code, `exit code; stderr:\n${stderr}\nstdout:\n${stdout}`).toBe(0);
      const lines = stdout.split('\n').map((line) => line.trimEnd());
      let from = 0;
      for (const want of recipe.expected) {
        const at = lines.indexOf(want, from);
        expect(at, `"${want}" in order in:\n${stdout}\nstderr:\n${stderr}`).toBeGreaterThanOrEqual(0);
        from = at + 1;
      }
    }, 90_000);
  }
});
