import { execFile, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, expect, it } from 'vitest';
import { installPacked } from './packed.ts';

// The package as users get it: `npm pack`, installed into an empty folder without dev dependencies, then
// `npx svc-emulator start`, `conformance`, and `proxy --record`, `import-recording` and `parity`, with no
// TypeScript toolchain at run time.

const run = promisify(execFile);
const dirs: string[] = [];
let emulator: ChildProcess | undefined;
let proxy: ChildProcess | undefined;
afterAll(async () => {
  // npx runs the command under a shell: the whole process group goes, or the emulator outlives the test.
  for (const child of [emulator, proxy]) {
    if (child?.pid === undefined) continue;
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

it('installs from npm pack into an empty folder and runs start, conformance, proxy --record, import-recording and parity without dev dependencies', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-pack-'));
  dirs.push(dir);
  const app = await installPacked(dir, { name: 'app', version: '1.0.0', private: true });
  const installed = await readdir(join(app, 'node_modules'));
  for (const devTool of ['tsx', 'typescript', 'vitest', '@stoplight']) expect(installed).not.toContain(devTool);
  const shipped = await readdir(join(app, 'node_modules', 'svc-emulator'));
  expect(shipped).toEqual(expect.arrayContaining(['bin', 'dist', 'openapi', 'fixtures', 'scenarios']));
  expect(shipped).not.toContain('src');

  const entries = "const [p, r, x] = await Promise.all([import('svc-emulator/parity'), import('svc-emulator/recording'), import('svc-emulator/proxy')]); console.log(typeof p.runParity, typeof r.readRecording, typeof x.createProxy);";
  expect((await run('node', ['--input-type=module', '-e', entries], { cwd: app })).stdout).toBe('function function function\n');

  // The package ships what its own files derive (dist/derived/): a first start with an empty cache parses no YAML,
  // so it leaves nothing in the cache.
  expect((await readdir(join(app, 'node_modules', 'svc-emulator', 'dist', 'derived'))).filter((f) => f.startsWith('openapi-'))).toHaveLength(2);
  const cache = join(dir, 'empty-cache');
  emulator = spawn('npx', ['svc-emulator', 'start', '--memory', '--port', '0', '--clock', 'manual', '--admin-token', 'adm', '--allow-insecure-webhooks'], {
    cwd: app,
    detached: true,
    env: { ...process.env, SVC_EMULATOR_CACHE_DIR: cache },
  });
  const base = await new Promise<string>((resolve, reject) => {
    let out = '';
    emulator?.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (match?.[1]) resolve(match[1]);
    });
    emulator?.once('exit', (code) => reject(new Error(`start exited ${code}: ${out}`)));
  });
  expect(await readdir(cache).catch(() => [])).toEqual([]);
  const { stdout } = await run('npx', ['svc-emulator', 'conformance', '--base-url', base, '--api-key', 'sk-emulator-demo', '--admin-url', base, '--admin-token', 'adm', '--budget', '100000'], { cwd: app });
  expect(stdout).toMatch(/^\d+ passed, 0 failed, 0 skipped$/m);

  const recorded = join(dir, 'recorded');
  proxy = spawn('npx', ['svc-emulator', 'proxy', '--upstream', base, '--port', '0', '--record', recorded], { cwd: app, detached: true });
  let proxyOut = '';
  const proxyBase = await new Promise<string>((resolve, reject) => {
    proxy?.stdout?.on('data', (chunk: Buffer) => {
      proxyOut += chunk.toString();
      const match = /proxy listening on (http:\/\/\S+)/.exec(proxyOut);
      if (match?.[1]) resolve(match[1]);
    });
    proxy?.once('exit', (code) => reject(new Error(`proxy exited ${code}: ${proxyOut}`)));
  });
  const headers = { Authorization: 'Bearer sk-emulator-demo', 'Content-Type': 'application/json' };
  expect((await fetch(`${proxyBase}/v1/models`, { headers })).status).toBe(200);
  const chat = await fetch(`${proxyBase}/v1/chat/completions`, { method: 'POST', headers, body: JSON.stringify({ model: 'svc-text-lite', max_tokens: 8, messages: [{ role: 'user', content: 'Hi' }] }) });
  expect(chat.status).toBe(200);
  await chat.arrayBuffer();
  // 'close': the output of the whole group has ended, the proxy's last lines included (npx may exit first).
  const stopped = new Promise((resolve) => proxy?.once('close', resolve));
  process.kill(-(proxy.pid ?? 0), 'SIGTERM');
  await stopped;
  expect(proxyOut).toMatch(/^proxy stopped: 2 exchanges checked, 0 deviations$/m);
  const imported = await run('npx', ['svc-emulator', 'import-recording', recorded], { cwd: app });
  expect(imported.stdout).toContain('imported 1 text call');
  const parity = await run('npx', ['svc-emulator', 'parity', recorded, '--base-url', base, '--admin-token', 'adm'], { cwd: app });
  expect(parity.stdout).toMatch(/^parity 100 %: (\d+) of \1 checks agreed, 0 differed/m);
}, 180_000);
