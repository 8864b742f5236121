import { execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cliBin } from '../support/cli-build.ts';
import { required } from '../support/required-tools.ts';
import { blocksOf, docPages, ROOT, type Block } from './doc-blocks.ts';

// Every shell block of the README and docs/, run as a user's script runs it: saved to a file and run with
// `bash -e -o pipefail` (a CI step's shell), non-interactive, in a scratch folder that stands for a clone (its
// node_modules/.bin has `svc-emulator`, and `npx` any other command there).
// Only the ports change: a block names its ports once, at its top (`PORT=${PORT:-4010}`, and PROXY_PORT 4011,
// UPSTREAM_PORT 4012, RECEIVER_PORT 4020), and runs here with each set to a free port in its environment; the script
// text is run as written, so a port written anywhere else would be called on the default and fail. A block passes when it exits 0, prints its output block's lines in order, and leaves nothing
// running: every port it used is closed again and no process it started is left.
//
// `npx svc-emulator ARGS` runs this checkout's command, `node bin/svc-emulator.js ARGS` as npx ends up running it,
// laid out as the other CLI tests run it (test/support/cli-build.ts), through an `npx` first on the blocks' PATH
// that hands every other command to the real npx. The blocks call the command some 25 times: npm's own start, and
// tsx's loading of src/, were each about half the CPU time of a call. The real `npx svc-emulator` in a clone, from
// npx's lookup of the command to the emulator leaving when the script kills npx, is test/cli/launcher.test.ts's.

const has = (tool: string): boolean => {
  try {
    execFileSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};
const missing = ['curl', 'jq'].filter((tool) => !has(tool));
it('has curl and jq where the run requires them (SVC_TEST_REQUIRE: CI), so the blocks cannot pass by skipping', () => {
  expect(missing.filter(required), 'required but missing').toEqual([]);
});

const blocks = docPages().flatMap(blocksOf);
const runnable = blocks.filter((block) => block.skip === null);

it('finds the blocks of every page, and skips only the few that cannot run here, each saying why', () => {
  expect(runnable.length).toBeGreaterThanOrEqual(10);
  expect(blocks.filter((block) => block.skip !== null).map((block) => `${block.page}: ${block.skip}`)).toEqual([
    "CONTRIBUTING.md: the project's own checks, which .ci/run runs in this order",
    'README.md: the two commands of a fresh clone: npm start serves until stopped, and npm test is the suite this test is part of',
    'docs/getting-started.md: serves until stopped; test/cli/launcher.test.ts starts npm start as a script does',
    'docs/getting-started.md: installs from a tarball into your own project; test/package/ runs the tarball and git routes',
    'docs/guides/ci-contract-tests.md: needs the real service and two of its API keys',
    'docs/guides/record-and-replay.md: needs the real service and its API key',
  ]);
});

it('calls the command as `npx svc-emulator` in every block', () => {
  const bare = blocks.filter((block) => /(^|[^\w/-])(?<!npx )svc-emulator (start|receive|conformance|store|proxy|import-recording|parity)\b/m.test(block.script));
  expect(bare.map((block) => block.where)).toEqual([]);
});

/** The port variables of the blocks, each with the default the pages show. */
const PORT_VARIABLES = { PORT: 4010, PROXY_PORT: 4011, UPSTREAM_PORT: 4012, RECEIVER_PORT: 4020 } as const;

it('keeps the process id of what a block starts in the background, waits for it a bounded time, and stops it', () => {
  for (const block of runnable.filter((b) => /&\s*$/m.test(b.script))) {
    expect(block.script, block.where).toMatch(/=\$!/);
    expect(block.script, block.where).toMatch(/trap '[^']*kill /);
    // for _ in $(seq N); do curl … && break; kill -0 "$pid"; sleep 0.2; done, then the same call || { echo …; exit 1; }
    expect(block.script, block.where).toMatch(/^for _ in \$\(seq \d+\); do curl [^\n]*&& break; kill -0 "\$\w+"; sleep [\d.]+; done\ncurl [^\n]*\|\| \{ echo "[^"]+" >&2; exit 1; \}$/m);
    // A wait with no end (`until curl …; done`, `while curl …`) hangs a script whose port is wrong.
    expect(block.script, block.where).not.toMatch(/^\s*(until|while) (?!\()/m);
  }
});

it('names each port once, at the top of the block, and uses only the variable after that', () => {
  const offending: string[] = [];
  for (const block of runnable) {
    const lines = block.script.split('\n');
    const first = lines[0] ?? '';
    for (const [name, port] of Object.entries(PORT_VARIABLES)) {
      const uses = new RegExp(`\\$\\{?${name}\\b`).test(lines.slice(1).join('\n'));
      if (uses && !first.includes(`${name}=\${${name}:-${port}}`)) offending.push(`${block.where}: uses $${name} without ${name}=\${${name}:-${port}} on its first line`);
    }
    const written = /(?:127\.0\.0\.1:|localhost:|--port[ =]"?)(4\d{3})\b/.exec(lines.slice(1).join('\n'));
    if (written) offending.push(`${block.where}: writes the port ${written[1]} (use its variable)`);
    if (/svc-emulator start\b/.test(block.script) && !/svc-emulator start [^\n]*--port "\$PORT"/.test(block.script)) {
      offending.push(`${block.where}: starts the emulator without --port "$PORT"`);
    }
  }
  expect(offending).toEqual([]);
});

it('pipes no command whose exit code matters: a block prints the same under a plain `bash -e` as under pipefail', () => {
  const offending: string[] = [];
  for (const block of runnable) {
    // Continuation lines joined, quoted text (jq filters, JSON bodies) taken out: what is left is the shell's.
    const lines = block.script.replaceAll('\\\n', ' ').split('\n').map((line) => line.replaceAll(/'[^']*'/g, "''").replace(/\s#.*$/, ''));
    for (const line of lines) {
      // `cmd | filter || echo "exit code $?"`: without pipefail, the status tested is the filter's.
      if (/(^|[^|])\|(?!\|)[^\n]*\|\|/.test(line)) offending.push(`${block.where}: ${line.trim()}`);
      // The project's own commands are what a script tests (a verdict, a parity, a conformance run).
      else if (/npx svc-emulator [^|]*(^|[^|])\|(?!\|)/.test(line)) offending.push(`${block.where}: ${line.trim()}`);
    }
  }
  expect(offending).toEqual([]);
});

// ---- running them

/**
 * The lowest port the system hands out by itself (to a `listen(0)`, to an outgoing connection): a port is picked
 * below it, so that between the check here and the block's own start no other test's server or connection can
 * be given it (one picked by `listen(0)` and closed again was taken by another test meanwhile).
 */
const EPHEMERAL_FROM = ((): number => {
  try {
    return Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || 32768;
  } catch {
    return 32768;
  }
})();
const PICK_FROM = Math.min(20_000, EPHEMERAL_FROM - 2_000);

async function freePort(taken: Set<number>): Promise<number> {
  for (;;) {
    const port = PICK_FROM + Math.floor(Math.random() * (EPHEMERAL_FROM - PICK_FROM));
    if (taken.has(port)) continue;
    const server = createServer();
    const free = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => resolve(true));
    });
    if (free) await new Promise((resolve) => server.close(resolve));
    if (!free) continue;
    taken.add(port);
    return port;
  }
}

const listening = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });

/** Processes whose environment carries this run's mark: what a block started, wherever it was reparented. */
function marked(mark: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/environ`, 'latin1').split('\0').includes(mark)) pids.push(Number(entry));
    } catch {
      // Gone, or not ours to read.
    }
  }
  return pids;
}

const killPid = (pid: number, signal: NodeJS.Signals = 'SIGKILL'): void => {
  try {
    process.kill(pid, signal);
  } catch {
    // Already gone.
  }
};

const dirs: string[] = [];
/** The marks of the blocks still running: a run filtered with -t ends without waiting for the blocks it skips. */
const running = new Set<string>();
let ended = false;
afterAll(async () => {
  ended = true;
  for (const mark of running) for (const pid of marked(mark)) killPid(pid);
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

/** A folder holding the `npx` put first on the blocks' PATH (see the header): made once, for every block. */
let shim: Promise<string> | null = null;
const npxShim = (): Promise<string> =>
  (shim ??= (async () => {
    const real = execFileSync('sh', ['-c', 'command -v npx'], { encoding: 'utf8' }).trim();
    const dir = await mkdtemp(join(tmpdir(), 'svc-doc-npx-'));
    dirs.push(dir);
    const quote = (text: string): string => `'${text.replaceAll("'", `'\\''`)}'`;
    const script = [
      '#!/bin/sh',
      '# npx svc-emulator ARGS: the checkout\'s command, as npx runs it; anything else: the real npx.',
      `if [ "$1" = svc-emulator ]; then shift; exec ${quote(process.execPath)} ${quote(cliBin())} "$@"; fi`,
      `exec ${quote(real)} "$@"`,
      '',
    ].join('\n');
    await writeFile(join(dir, 'npx'), script, { mode: 0o755 });
    return dir;
  })());

const taken = new Set<number>([4010, 4011, 4012, 4020]);

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
  leftPorts: number[];
  leftProcesses: string[];
}

async function run(block: Block): Promise<Outcome> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-doc-block-'));
  dirs.push(dir);
  // The scratch clone: the project's commands in node_modules/.bin, and the folders a block reads.
  mkdirSync(join(dir, 'node_modules/.bin'), { recursive: true });
  for (const bin of readdirSync(join(ROOT, 'node_modules/.bin'))) symlinkSync(join(ROOT, 'node_modules/.bin', bin), join(dir, 'node_modules/.bin', bin));
  symlinkSync(join(ROOT, 'bin/svc-emulator.js'), join(dir, 'node_modules/.bin/svc-emulator'));
  for (const folder of ['openapi', 'examples', 'scenarios', 'fixtures', 'src']) symlinkSync(join(ROOT, folder), join(dir, folder));

  // Every port variable gets a free port other than the pages' defaults, whether the block uses it or not.
  const ports = new Map<string, number>();
  for (const name of Object.keys(PORT_VARIABLES)) ports.set(name, await freePort(taken));
  await writeFile(join(dir, 'block.sh'), block.script);

  const mark = `SVC_DOC_BLOCK=${randomUUID()}`;
  if (ended) return { code: null, stdout: '', stderr: 'not run: the test file had ended', leftPorts: [], leftProcesses: [] };
  running.add(mark);
  const child = spawn('bash', ['-e', '-o', 'pipefail', 'block.sh'], {
    cwd: dir,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      PATH: `${await npxShim()}:${process.env['PATH'] ?? ''}`,
      ...Object.fromEntries([...ports].map(([name, port]) => [name, String(port)])),
      // Not the emulator's own variable: a start that forgets --port "$PORT" must not be rescued by it.
      SVC_EMULATOR_PORT: undefined,
      SVC_DOC_BLOCK: mark.slice('SVC_DOC_BLOCK='.length),
    },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = setTimeout(() => {
    stderr += '\n[docs test: stopped after 120 s]';
    for (const pid of marked(mark)) killPid(pid);
  }, 120_000);
  // The script's end, not its pipes': a process it left running would hold them open.
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  clearTimeout(timer);
  await Promise.race([new Promise((resolve) => child.once('close', resolve)), new Promise((resolve) => setTimeout(resolve, 1_000))]);

  // What it started must go on its own: an emulator whose npm has gone closes within a second.
  const deadline = Date.now() + 8_000;
  let leftPorts: number[] = [];
  let left: number[] = [];
  do {
    await new Promise((resolve) => setTimeout(resolve, 250));
    leftPorts = [];
    for (const port of ports.values()) if (await listening(port)) leftPorts.push(port);
    left = marked(mark);
  } while ((leftPorts.length > 0 || left.length > 0) && Date.now() < deadline);
  const leftProcesses = left.map((pid) => {
    try {
      return `${pid} ${readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim()}`;
    } catch {
      return String(pid);
    }
  });
  for (const pid of left) killPid(pid);
  running.delete(mark);
  return { code, stdout, stderr, leftPorts, leftProcesses };
}

// Two blocks at a time: each starts one to three node processes on a machine that may have two cores.
const outcomes = new Map<Block, Promise<Outcome>>();
if (missing.length === 0) {
  let next = 0;
  const starters: (() => void)[] = [];
  const pending = runnable.map((block) => new Promise<Outcome>((resolve, reject) => starters.push(() => void run(block).then(resolve, reject))));
  runnable.forEach((block, i) => outcomes.set(block, pending[i] as Promise<Outcome>));
  const lane = async (): Promise<void> => {
    while (next < runnable.length) {
      const i = next++;
      starters[i]?.();
      await (pending[i] as Promise<Outcome>).catch(() => undefined);
    }
  };
  void Promise.all([lane(), lane()]);
}

describe.skipIf(missing.length > 0)(`the docs' shell blocks${missing.length > 0 ? ` (skipped: ${missing.join(' and ')} not installed)` : ''}`, () => {
  for (const block of runnable) {
    it(`${block.where} runs as a script and leaves nothing running`, async () => {
      const { code, stdout, stderr, leftPorts, leftProcesses } = await (outcomes.get(block) as Promise<Outcome>);
      const shown = `\nstdout:\n${stdout}\nstderr:\n${stderr}`;
      expect(code, `exit code${shown}`).toBe(0);
      const lines = stdout.split('\n').map((line) => line.trimEnd());
      let from = 0;
      for (const want of block.expected) {
        const at = lines.indexOf(want, from);
        expect(at, `"${want}" in order in${shown}`).toBeGreaterThanOrEqual(0);
        from = at + 1;
      }
      expect(leftPorts, `ports still listening after the script ended${shown}`).toEqual([]);
      expect(leftProcesses, `processes it started, still running after it ended${shown}`).toEqual([]);
    }, 240_000);
  }
});
