import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { notACommand, UsageError } from '../../src/cli/args.ts';
import { COMMANDS } from '../../src/cli/help.ts';
import { parseReceiveOptions } from '../../src/cli/receive.ts';
import { parseStartOptions } from '../../src/cli/start-options.ts';
import { storeCommand } from '../../src/cli/store.ts';
import { killAll, runCli } from '../support/cli.ts';

// Option errors name where the bad value came from, a flag, an environment variable or a config file, and a
// mistyped name gets a "did you mean" (issue 17, item 12). Each is one line on standard error and exit 2: the
// parsers are called here directly, and a few command lines go through the real command to show the wiring.

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-cli-options-'));
});
afterEach(killAll);
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The line the command prints for a usage error the parser throws (src/cli/main.ts prints its message). */
async function usageLine(parse: () => unknown): Promise<string> {
  try {
    await parse();
  } catch (err) {
    expect(err).toBeInstanceOf(UsageError);
    return (err as Error).message;
  }
  throw new Error('parsed without a usage error');
}

/** A config file in the test's folder. */
async function config(name: string, text: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, text);
  return path;
}

it.each([
  ['a flag', ['--port', 'abc'], {}, 'svc-emulator start: --port abc: must be 0-65535'],
  ['an environment variable', [], { SVC_EMULATOR_PORT: 'abc' }, 'svc-emulator start: SVC_EMULATOR_PORT=abc: must be 0-65535'],
  ['an environment on/off', [], { SVC_EMULATOR_MEMORY: 'maybe' }, 'svc-emulator start: SVC_EMULATOR_MEMORY=maybe: must be on or off (true, false, 1, 0, yes or no)'],
  ['a flag of a choice', ['--clock', 'sundial'], {}, 'svc-emulator start: --clock sundial: must be real or manual'],
  [
    'two flags that disagree',
    ['--headers-timeout-ms', '5000', '--request-timeout-ms', '1000'],
    {},
    'svc-emulator start: --headers-timeout-ms 5000 and --request-timeout-ms 1000: the headers timeout (5000 ms) must not be longer than the request timeout (1000 ms)',
  ],
])('names where a bad value came from: %s', async (_source, args, env, line) => {
  expect(await usageLine(() => parseStartOptions(args, env))).toBe(line);
});

it('names the config file and the key that holds a bad value, and the value', async () => {
  const file = await config('emu.yaml', 'port: abc\n');
  expect(await usageLine(() => parseStartOptions(['--config', file], {}))).toBe(`svc-emulator start: port in ${file}: must be 0-65535, got abc`);
});

it('lets a flag beat a bad value in the environment, which it replaces', async () => {
  // The bad environment value is never looked at: the flag's is the one named.
  expect(await usageLine(() => parseStartOptions(['--port', 'x', '--clock', 'manual'], { SVC_EMULATOR_CLOCK: 'sundial' }))).toBe('svc-emulator start: --port x: must be 0-65535');
});

it('suggests the nearest option for an unknown config-file key', async () => {
  const file = await config('typo.yaml', 'prot: 4011\n');
  expect(await usageLine(() => parseStartOptions(['--config', file], {}))).toBe(`svc-emulator start: unknown option prot in ${file}; did you mean port? (svc-emulator start --help lists them)`);
});

it('lists every unknown config-file key, each with its suggestion where there is one', async () => {
  const file = await config('typos.json', '{"prot": 4011, "log-fromat": "json", "colour": "blue"}');
  expect(await usageLine(() => parseStartOptions(['--config', file], {}))).toBe(
    `svc-emulator start: unknown options in ${file}: prot (did you mean port?), log-fromat (did you mean log-format?), colour (svc-emulator start --help lists them)`,
  );
});

it('names the environment variable of a config file that does not exist', async () => {
  const missing = join(dir, 'missing.yaml');
  expect(await usageLine(() => parseStartOptions([], { SVC_EMULATOR_CONFIG: missing }))).toBe(`svc-emulator start: SVC_EMULATOR_CONFIG=${missing}: no such file`);
});

it('names a state document to import that does not exist, before opening any store', async () => {
  const missing = join(dir, 'state.json');
  expect(await usageLine(() => parseStartOptions(['--memory', '--import', missing], {}))).toBe(`svc-emulator start: --import ${missing}: no such file`);
});

it.each([
  ['an unknown command', () => {
    throw notACommand('strat', COMMANDS);
  }, "svc-emulator: unknown command 'strat'; did you mean start? (svc-emulator --help lists them)"],
  ['an unknown command with nothing near it', () => {
    throw notACommand('launch', COMMANDS);
  }, "svc-emulator: unknown command 'launch' (svc-emulator --help lists them)"],
  ['an option before any command', () => {
    throw notACommand('--port', COMMANDS);
  }, 'svc-emulator: --port goes after a command (svc-emulator start --port …; svc-emulator --help lists them)'],
  ['an unknown start flag', () => parseStartOptions(['--prot', '4011'], {}), 'svc-emulator start: unknown option --prot; did you mean --port? (svc-emulator start --help lists them)'],
  ['an unknown receive flag', () => parseReceiveOptions(['--secert', 'whsec_eA=='], {}), 'svc-emulator receive: unknown option --secert; did you mean --secret? (svc-emulator receive --help lists them)'],
  ['a value given to an on/off flag', () => parseStartOptions(['--memory=yes'], {}), 'svc-emulator start: --memory takes no value (give --memory to turn it on)'],
  ['a receive flag without its value', () => parseReceiveOptions(['--secret'], {}), 'svc-emulator receive: --secret needs a value (--secret VALUE or --secret=VALUE)'],
  ['a bad receive port', () => parseReceiveOptions(['--secret', 'whsec_eA==', '--port', '70000'], {}), 'svc-emulator receive: --port 70000: must be 0-65535'],
  ['a receive secret of the wrong kind', () => parseReceiveOptions(['--secret', 'sk-emulator-demo'], {}), "svc-emulator receive: --secret: must start with whsec_ (the account's signing secret)"],
  [
    'a receive secret of the wrong kind from the environment, without showing the secret',
    () => parseReceiveOptions([], { SVC_EMULATOR_WEBHOOK_SECRET: 'not-a-secret' }),
    "svc-emulator receive: SVC_EMULATOR_WEBHOOK_SECRET: must start with whsec_ (the account's signing secret)",
  ],
  ['an unknown store flag', () => storeCommand(['check', '--dbb', 'x.db']), 'svc-emulator store: unknown option --dbb; did you mean --db? (svc-emulator store --help lists them)'],
  ['an unknown store action', () => storeCommand(['chek']), "svc-emulator store: unknown action 'chek'; did you mean check? (svc-emulator store --help lists them)"],
  ['a store action without its file', () => storeCommand(['backup']), 'svc-emulator store backup: needs a FILE (svc-emulator store backup FILE)'],
])('says what is wrong with %s in one line', async (_what, parse, line) => {
  expect(await usageLine(parse)).toBe(line);
});

it('prints a usage error as one line on standard error and exits 2: of start, of a command that takes an action, of the command itself', async () => {
  const cases: [string[], Record<string, string>, string][] = [
    [['start'], { SVC_EMULATOR_PORT: 'abc' }, 'svc-emulator start: SVC_EMULATOR_PORT=abc: must be 0-65535'],
    [['store', 'chek'], {}, "svc-emulator store: unknown action 'chek'; did you mean check? (svc-emulator store --help lists them)"],
    [['strat'], {}, "svc-emulator: unknown command 'strat'; did you mean start? (svc-emulator --help lists them)"],
  ];
  const results = await Promise.all(cases.map(([args, env]) => runCli(args, env)));
  expect(results.map(({ code, stdout, stderr }) => ({ code, stdout, stderr }))).toEqual(cases.map(([, , line]) => ({ code: 2, stdout: '', stderr: `${line}\n` })));
});
