import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { parseStartOptions, START_HELP } from '../../src/cli/start-options.ts';
import { cliBin } from '../support/cli-build.ts';

// Every start option as a flag, an environment variable and a config-file key; structured request logs.

let child: ChildProcess | undefined;
const dirs: string[] = [];
afterEach(async () => {
  child?.kill('SIGKILL');
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

it('takes flags over the environment over the config file over the defaults', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-config-'));
  dirs.push(dir);
  const file = join(dir, 'emulator.yaml');
  await writeFile(file, 'port: 4111\nclock: manual\nlog-format: json\nrecord-content: true\nfile-retention-hours: 2\n');
  const fromFile = parseStartOptions(['--config', file], {});
  expect(fromFile).toMatchObject({ port: 4111, clock: 'manual', logFormat: 'json', recordContent: true, fileRetentionSeconds: 7200 });
  const fromEnv = parseStartOptions(['--config', file], { SVC_EMULATOR_PORT: '4222', SVC_EMULATOR_LOG_FORMAT: 'pretty' });
  expect(fromEnv).toMatchObject({ port: 4222, logFormat: 'pretty', clock: 'manual' });
  const fromFlag = parseStartOptions(['--config', file, '--port', '4333'], { SVC_EMULATOR_PORT: '4222' });
  expect(fromFlag.port).toBe(4333);
  expect(parseStartOptions([], {})).toMatchObject({ port: 4010, host: '127.0.0.1', clock: 'real', logLevel: 'info', logFormat: 'pretty' });
});

it('refuses a config file with an unknown option, naming it', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-config-'));
  dirs.push(dir);
  const file = join(dir, 'bad.json');
  await writeFile(file, '{"port": 4111, "colour": "blue"}');
  expect(() => parseStartOptions(['--config', file], {})).toThrow('unknown option colour');
});

it('lists every option with its environment variable in --help', () => {
  for (const flag of ['--config', '--port', '--db', '--memory', '--clock', '--speed', '--admin-token', '--log-level', '--log-format', '--record-content']) {
    expect(START_HELP).toContain(flag);
  }
  expect(START_HELP).toContain('SVC_EMULATOR_LOG_LEVEL');
  expect(START_HELP).toContain('SVC_EMULATOR_ALLOW_INSECURE_WEBHOOKS');
});

it('logs one JSON line per request with request id, key id, status and latency', async () => {
  child = spawn(process.execPath, [cliBin(), 'start', '--memory', '--port', '0', '--log-format', 'json'], { stdio: 'pipe' });
  let out = '';
  let err = '';
  child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (err += c.toString()));
  const base = await new Promise<string>((resolve, reject) => {
    child?.stdout?.on('data', () => {
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (match?.[1]) resolve(match[1]);
    });
    child?.once('exit', (code) => reject(new Error(`exited ${code}: ${out}${err}`)));
  });
  const res = await fetch(`${base}/v1/tasks`, { headers: { Authorization: 'Bearer sk-emulator-demo' } });
  const id = res.headers.get('x-request-id') ?? '-';
  // The line is written when the answer is done; wait for it to arrive on the child's stderr.
  await new Promise<void>((resolve) => {
    const look = (): void => void (err.includes(id) ? resolve() : child?.stderr?.once('data', look));
    look();
  });
  const line = err.split('\n').find((l) => l.includes(res.headers.get('x-request-id') ?? '-'));
  expect(line).toBeDefined();
  expect(JSON.parse(line ?? '{}')).toMatchObject({
    level: 'info',
    message: 'GET /v1/tasks 200',
    request_id: res.headers.get('x-request-id'),
    key: 'sk-…demo',
    status: 200,
    latency_ms: expect.any(Number),
  });
});
