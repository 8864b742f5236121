import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';

// Option errors name where the bad value came from, a flag, an environment variable or a config file, and a
// mistyped name gets a "did you mean" (issue 17, item 12). Each is one line on standard error and exit 2.

const BIN = new URL('../../bin/svc-emulator.js', import.meta.url).pathname;

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-cli-options-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Runs the CLI to its end, with `SVC_EMULATOR_*` variables only as the test gives them. */
function run(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('SVC_EMULATOR_') || name === 'SVC_EMULATOR_CACHE_DIR'));
  const child = spawn(process.execPath, [BIN, ...args], { env: { ...inherited, ...env }, stdio: 'pipe' });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
}

/** A config file in the test's folder. */
async function config(name: string, text: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, text);
  return path;
}

it.each([
  ['a flag', ['start', '--port', 'abc'], {}, 'svc-emulator start: --port abc: must be 0-65535'],
  ['an environment variable', ['start'], { SVC_EMULATOR_PORT: 'abc' }, 'svc-emulator start: SVC_EMULATOR_PORT=abc: must be 0-65535'],
  ['an environment on/off', ['start'], { SVC_EMULATOR_MEMORY: 'maybe' }, 'svc-emulator start: SVC_EMULATOR_MEMORY=maybe: must be on or off (true, false, 1, 0, yes or no)'],
  ['a flag of a choice', ['start', '--clock', 'sundial'], {}, 'svc-emulator start: --clock sundial: must be real or manual'],
  [
    'two flags that disagree',
    ['start', '--headers-timeout-ms', '5000', '--request-timeout-ms', '1000'],
    {},
    'svc-emulator start: --headers-timeout-ms 5000 and --request-timeout-ms 1000: the headers timeout (5000 ms) must not be longer than the request timeout (1000 ms)',
  ],
])('names where a bad value came from: %s', async (_source, args, env, line) => {
  const { code, stderr } = await run(args, env);
  expect(code).toBe(2);
  expect(stderr).toBe(`${line}\n`);
});

it('names the config file and the key that holds a bad value, and the value', async () => {
  const file = await config('emu.yaml', 'port: abc\n');
  const { code, stderr } = await run(['start', '--config', file]);
  expect(code).toBe(2);
  expect(stderr).toBe(`svc-emulator start: port in ${file}: must be 0-65535, got abc\n`);
});

it('lets a flag beat a bad value in the environment, which it replaces', async () => {
  const { code, stderr } = await run(['start', '--port', 'x', '--clock', 'manual'], { SVC_EMULATOR_CLOCK: 'sundial' });
  expect(code).toBe(2);
  // The bad environment value is never looked at: the flag's is the one named.
  expect(stderr).toBe('svc-emulator start: --port x: must be 0-65535\n');
});

it('suggests the nearest option for an unknown config-file key', async () => {
  const file = await config('typo.yaml', 'prot: 4011\n');
  const { code, stderr } = await run(['start', '--config', file]);
  expect(code).toBe(2);
  expect(stderr).toBe(`svc-emulator start: unknown option prot in ${file}; did you mean port? (svc-emulator start --help lists them)\n`);
});

it('lists every unknown config-file key, each with its suggestion where there is one', async () => {
  const file = await config('typos.json', '{"prot": 4011, "log-fromat": "json", "colour": "blue"}');
  const { code, stderr } = await run(['start', '--config', file]);
  expect(code).toBe(2);
  expect(stderr).toBe(`svc-emulator start: unknown options in ${file}: prot (did you mean port?), log-fromat (did you mean log-format?), colour (svc-emulator start --help lists them)\n`);
});

it('names the environment variable of a config file that does not exist', async () => {
  const missing = join(dir, 'missing.yaml');
  const { code, stderr } = await run(['start'], { SVC_EMULATOR_CONFIG: missing });
  expect(code).toBe(2);
  expect(stderr).toBe(`svc-emulator start: SVC_EMULATOR_CONFIG=${missing}: no such file\n`);
});

it('names a state document to import that does not exist, before opening any store', async () => {
  const missing = join(dir, 'state.json');
  const { code, stderr } = await run(['start', '--memory', '--import', missing]);
  expect(code).toBe(2);
  expect(stderr).toBe(`svc-emulator start: --import ${missing}: no such file\n`);
});

it.each([
  ['an unknown command', ['strat'], "svc-emulator: unknown command 'strat'; did you mean start? (svc-emulator --help lists them)"],
  ['an unknown command with nothing near it', ['launch'], "svc-emulator: unknown command 'launch' (svc-emulator --help lists them)"],
  ['an option before any command', ['--port', '4011'], 'svc-emulator: --port goes after a command (svc-emulator start --port …; svc-emulator --help lists them)'],
  ['an unknown start flag', ['start', '--prot', '4011'], 'svc-emulator start: unknown option --prot; did you mean --port? (svc-emulator start --help lists them)'],
  ['an unknown receive flag', ['receive', '--secert', 'whsec_eA=='], 'svc-emulator receive: unknown option --secert; did you mean --secret? (svc-emulator receive --help lists them)'],
  ['a value given to an on/off flag', ['start', '--memory=yes'], 'svc-emulator start: --memory takes no value (give --memory to turn it on)'],
  ['a receive flag without its value', ['receive', '--secret'], 'svc-emulator receive: --secret needs a value (--secret VALUE or --secret=VALUE)'],
  ['a bad receive port', ['receive', '--secret', 'whsec_eA==', '--port', '70000'], 'svc-emulator receive: --port 70000: must be 0-65535'],
  ['a receive secret of the wrong kind', ['receive', '--secret', 'sk-emulator-demo'], "svc-emulator receive: --secret: must start with whsec_ (the account's signing secret)"],
  ['an unknown store flag', ['store', 'check', '--dbb', 'x.db'], 'svc-emulator store: unknown option --dbb; did you mean --db? (svc-emulator store --help lists them)'],
  ['an unknown store action', ['store', 'chek'], "svc-emulator store: unknown action 'chek'; did you mean check? (svc-emulator store --help lists them)"],
  ['a store action without its file', ['store', 'backup'], 'svc-emulator store backup: needs a FILE (svc-emulator store backup FILE)'],
])('says what is wrong with %s in one line, and exits 2', async (_what, args, line) => {
  const { code, stderr } = await run(args);
  expect(code).toBe(2);
  expect(stderr).toBe(`${line}\n`);
});

it('names the environment variable of a receive secret of the wrong kind, without showing the secret', async () => {
  const { code, stderr } = await run(['receive'], { SVC_EMULATOR_WEBHOOK_SECRET: 'not-a-secret' });
  expect(code).toBe(2);
  expect(stderr).toBe("svc-emulator receive: SVC_EMULATOR_WEBHOOK_SECRET: must start with whsec_ (the account's signing secret)\n");
});
