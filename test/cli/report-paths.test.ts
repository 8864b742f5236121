import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { createEmulator } from '../../src/index.ts';
import type { Emulator } from '../../src/index.ts';
import { DEMO_KEY, killAll, startCli } from '../support/cli.ts';
import { runCommand, spawnCommand } from '../support/command.ts';
import type { CommandRun } from '../support/command.ts';
import { closedPort } from '../support/ports.ts';

// Every file a command writes when it ends (issue 36, item 9): a report into a folder that does not exist yet is
// written, the folder made; one that cannot be written (a file where a folder should be, a folder where the file
// should be) is refused at the start, in one line and exit 2, before anything runs. Each command is the real one,
// in its own process; the deployment they judge is an emulator in this process.

const ADMIN = 'report-paths-admin';

let emulator: Emulator;
let base = '';
let dir = '';
/** A regular file: a path under it cannot be written. */
let file = '';
/** A recording of one chat completion, for parity and import-recording. */
let recording = '';

beforeAll(async () => {
  emulator = await createEmulator({ clock: 'manual', adminToken: ADMIN, log: () => undefined });
  base = await emulator.listen(0);
  dir = mkdtempSync(join(tmpdir(), 'svc-report-paths-'));
  file = join(dir, 'a-file');
  writeFileSync(file, '');
  recording = join(dir, 'recording');
  mkdirSync(recording);
  writeFileSync(join(recording, 'one.har'), JSON.stringify(chatRecording()));
});

afterAll(async () => {
  await emulator.close();
  rmSync(dir, { recursive: true, force: true });
});

afterEach(() => killAll());

/** One recorded POST /v1/chat/completions and its answer, as the proxy's recorder writes it. */
function chatRecording(): unknown {
  const answer = {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1_767_225_600,
    model: 'svc-text-pro',
    choices: [{ index: 0, message: { role: 'assistant', content: 'Hello there' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
  };
  const json = [{ name: 'Content-Type', value: 'application/json' }];
  return {
    log: {
      version: '1.2',
      creator: { name: 'report-paths.test', version: '1' },
      entries: [
        {
          startedDateTime: '2026-01-01T00:00:00.000Z',
          time: 5,
          request: {
            method: 'POST',
            url: 'http://127.0.0.1:9/v1/chat/completions',
            headers: json,
            postData: { mimeType: 'application/json', text: JSON.stringify({ model: 'svc-text-pro', messages: [{ role: 'user', content: 'Hi' }] }) },
          },
          response: { status: 200, headers: json, content: { mimeType: 'application/json', text: JSON.stringify(answer) } },
          timings: { send: 0, wait: 4, receive: 1 },
          _svcEmulator: { textFormat: 'chat', textFingerprint: `sha256:${'0'.repeat(64)}` },
        },
      ],
    },
  };
}

/** `svc-emulator ARGS` to its end (killed after 60 s: a command that should have refused and ran instead fails). */
const run = (args: string[]): Promise<CommandRun> => runCommand(args, 60_000);

/** A path two folders below `dir` that do not exist yet. */
const missing = (name: string): string => join(dir, `new-${name}`, 'nested', name);

/** Neither a stack trace nor more than the one line. */
function expectOneLine(result: CommandRun, line: string): void {
  expect(result.code, result.stdout + result.stderr).toBe(2);
  expect(result.stderr).not.toContain('    at ');
  expect(result.stderr).toBe(`${line}\n`);
}

it('conformance writes --junit and --json into folders that do not exist yet', async () => {
  const [junit, json] = [missing('conformance.xml'), missing('conformance.json')];
  const result = await run(['conformance', '--base-url', base, '--api-key', DEMO_KEY, '--only', 'wire.auth.missing-key', '--junit', junit, '--json', json]);
  expect(result.code, result.stdout + result.stderr).toBe(0);
  expect(result.stderr).toBe('');
  expect(readFileSync(junit, 'utf8')).toContain('name="wire.auth.missing-key"');
  expect(JSON.parse(readFileSync(json, 'utf8'))).toMatchObject({ failed: 0 });
}, 90_000);

it('verdict writes --junit and --json into folders that do not exist yet', async () => {
  const [junit, json] = [missing('verdict.xml'), missing('verdict.json')];
  const result = await run(['verdict', '--base-url', base, '--admin-token', ADMIN, '--junit', junit, '--json', json]);
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  expect(readFileSync(junit, 'utf8')).toContain('<testsuites name="svc-emulator verdict"');
  expect(JSON.parse(readFileSync(json, 'utf8'))).toMatchObject({ ok: true });
}, 90_000);

it('parity writes --json and --junit into folders that do not exist yet', async () => {
  const [json, junit] = [missing('parity.json'), missing('parity.xml')];
  const result = await run(['parity', recording, '--base-url', base, '--json', json, '--junit', junit]);
  expect(result.stderr).toBe('');
  expect([0, 1]).toContain(result.code);
  expect(JSON.parse(readFileSync(json, 'utf8'))).toHaveProperty('differed');
  expect(readFileSync(junit, 'utf8')).toContain('<testsuites');
}, 90_000);

it('start writes --export-on-exit into a folder that does not exist yet when it stops', async () => {
  const state = missing('state.json');
  const cli = await startCli(['--memory', '--export-on-exit', state]);
  cli.child.kill('SIGTERM');
  expect(await cli.exited, cli.output()).toBe(0);
  expect(cli.output()).not.toContain('    at ');
  expect(JSON.parse(readFileSync(state, 'utf8'))).toHaveProperty('accounts');
}, 90_000);

/** A proxy in its own process, resolved once it listens. */
async function startProxyCommand(args: string[]): Promise<{ output: () => string; stop: () => Promise<number | null> }> {
  const child = spawnCommand(['proxy', '--upstream', base, '--port', '0', ...args]);
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      if (/proxy listening on /.test(output)) resolve();
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    void exited.then((code) => reject(new Error(`exited ${code} before listening:\n${output}`)));
  });
  return {
    output: () => output,
    stop: () => {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

it('proxy writes --json and --junit into folders that do not exist yet when it stops', async () => {
  const [json, junit] = [missing('proxy.json'), missing('proxy.xml')];
  const proxy = await startProxyCommand(['--json', json, '--junit', junit]);
  expect(await proxy.stop(), proxy.output()).toBe(0);
  expect(proxy.output()).toContain(`proxy stopped: 0 exchanges checked, 0 deviations (written to ${json}, ${junit})`);
  expect(JSON.parse(readFileSync(json, 'utf8'))).toMatchObject({ upstream: base, count: 0 });
  expect(readFileSync(junit, 'utf8')).toContain('<testsuites');
}, 90_000);

it('proxy says in one line, and exits 2, when a report cannot be written as it stops; the other is still written', async () => {
  const [json, junit] = [missing('stopped.json'), missing('stopped.xml')];
  const proxy = await startProxyCommand(['--json', json, '--junit', junit]);
  // Between the start's check and the stop, a folder took the report's place.
  mkdirSync(json);
  expect(await proxy.stop(), proxy.output()).toBe(2);
  expect(proxy.output()).not.toContain('    at ');
  expect(proxy.output()).toContain(`proxy stopped: 0 exchanges checked, 0 deviations (written to ${junit})`);
  expect(proxy.output()).toMatch(new RegExp(`\\nsvc-emulator proxy: --json ${json}: cannot write there \\(EISDIR[^\\n]*\\)\\n$`));
  expect(readFileSync(junit, 'utf8')).toContain('<testsuites');
}, 90_000);

// Where nothing can be written, the command refuses before it does anything: each is given a deployment that does
// not answer, a recording that does not exist, or nothing to listen for, which it would have reported had it begun.
it.each<[string, (under: string, port: number) => { args: string[]; flag: string; path: string }]>([
  ['conformance --junit', (under, port) => ({ args: ['conformance', '--base-url', `http://127.0.0.1:${port}`, '--api-key', DEMO_KEY, '--junit', join(under, 'x.xml')], flag: '--junit', path: join(under, 'x.xml') })],
  ['conformance --json', (under, port) => ({ args: ['conformance', '--base-url', `http://127.0.0.1:${port}`, '--api-key', DEMO_KEY, '--json', join(under, 'x.json')], flag: '--json', path: join(under, 'x.json') })],
  ['verdict --junit', (under, port) => ({ args: ['verdict', '--base-url', `http://127.0.0.1:${port}`, '--admin-token', ADMIN, '--junit', join(under, 'x.xml')], flag: '--junit', path: join(under, 'x.xml') })],
  ['verdict --json', (under, port) => ({ args: ['verdict', '--base-url', `http://127.0.0.1:${port}`, '--admin-token', ADMIN, '--json', join(under, 'x.json')], flag: '--json', path: join(under, 'x.json') })],
  ['parity --json', (under, port) => ({ args: ['parity', join(dir, 'no-recording'), '--base-url', `http://127.0.0.1:${port}`, '--json', join(under, 'x.json')], flag: '--json', path: join(under, 'x.json') })],
  ['parity --junit', (under, port) => ({ args: ['parity', join(dir, 'no-recording'), '--base-url', `http://127.0.0.1:${port}`, '--junit', join(under, 'x.xml')], flag: '--junit', path: join(under, 'x.xml') })],
  ['proxy --json', (under, port) => ({ args: ['proxy', '--upstream', `http://127.0.0.1:${port}`, '--port', '0', '--json', join(under, 'x.json')], flag: '--json', path: join(under, 'x.json') })],
  ['proxy --junit', (under, port) => ({ args: ['proxy', '--upstream', `http://127.0.0.1:${port}`, '--port', '0', '--junit', join(under, 'x.xml')], flag: '--junit', path: join(under, 'x.xml') })],
  ['start --export-on-exit', (under) => ({ args: ['start', '--memory', '--port', '0', '--export-on-exit', join(under, 'x.json')], flag: '--export-on-exit', path: join(under, 'x.json') })],
  ['import-recording --out', (under) => ({ args: ['import-recording', recording, '--out', join(under, 'scenarios')], flag: '--out', path: join(under, 'scenarios') })],
])('%s under a regular file: one line, exit 2, nothing run', async (_name, make) => {
  const { args, flag, path } = make(join(file, 'deeper'), await closedPort());
  const result = await run(args);
  expect(result.stdout).toBe('');
  expectOneLine(result, `svc-emulator ${args[0] ?? ''}: ${flag} ${path}: cannot write there (${file} is a file, not a folder)`);
}, 90_000);

it('a report path that is a folder is refused before the run, in one line', async () => {
  const folder = join(dir, 'a-folder');
  mkdirSync(folder, { recursive: true });
  const result = await run(['conformance', '--base-url', base, '--api-key', DEMO_KEY, '--only', 'wire.auth.missing-key', '--json', folder]);
  expect(result.stdout).toBe('');
  expectOneLine(result, `svc-emulator conformance: --json ${folder}: cannot write there (a folder, not a file)`);
  expect(existsSync(join(folder, 'x'))).toBe(false);
}, 90_000);
