import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEmulator } from '../../src/index.ts';
import type { Emulator } from '../../src/index.ts';
import { busier } from '../support/busy.ts';
import { CHECKOUT_BIN, cliBin } from '../support/cli-build.ts';
import { chain, loaded } from '../support/import-graph.ts';

// The contract-test kit (conformance, proxy, recording, parity, observed, and the commands conformance, proxy,
// verdict and receive) must load and run where the store's native binding cannot. The commands run here as a
// checkout runs them (bin/svc-emulator.js, src/ module by module, as the package's dist/ is), under a hook that
// makes resolving `libsql` or `@libsql/*` fail; the emulator they talk to runs in this process, with its binding.
// They run again as the package runs them, from dist/command/ (test/support/cli-build.ts's layout, bundled by the
// package's recipe): there libsql must stay in the store's chunk, which none of these commands loads.

const ROOT = new URL('../../', import.meta.url).pathname;
const ADMIN = 'kit-admin';
const DEMO_KEY = 'sk-emulator-demo';
const BLOCKED = 'native binding made unavailable by the test';

const HOOKS = `
const blocked = (s) => s === 'libsql' || s.startsWith('libsql/') || s.startsWith('@libsql/');
export async function resolve(specifier, context, next) {
  if (blocked(specifier)) throw new Error(\`\${specifier}: ${BLOCKED}\`);
  return next(specifier, context);
}
`;
// The ESM hook for imports, and Module._resolveFilename for a require (createRequire) of the same names.
const PRELOAD = (hooks: string): string => `
import Module, { register } from 'node:module';
register(${JSON.stringify(hooks)});
const resolveFilename = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  if (request === 'libsql' || request.startsWith('libsql/') || request.startsWith('@libsql/')) {
    throw Object.assign(new Error(request + ': ${BLOCKED}'), { code: 'MODULE_NOT_FOUND' });
  }
  return resolveFilename.call(this, request, ...rest);
};
`;

let dir: string;
let preload: string;
let emulator: Emulator;
let base: string;
const children: ReturnType<typeof spawn>[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kit-without-binding-'));
  const hooks = join(dir, 'hooks.mjs');
  preload = join(dir, 'preload.mjs');
  await writeFile(hooks, HOOKS);
  await writeFile(preload, PRELOAD(pathToFileURL(hooks).href));
  emulator = await createEmulator({ clock: 'manual', adminToken: ADMIN, log: () => undefined });
  base = await emulator.listen(0);
});
afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await emulator?.close();
  await rm(dir, { recursive: true, force: true });
});

interface Run {
  child: ReturnType<typeof spawn>;
  output: () => string;
  printed: (pattern: RegExp) => Promise<RegExpExecArray>;
  exited: Promise<number | null>;
}

/** `svc-emulator ARGS` from `bin` with libsql unresolvable. */
function withoutBinding(bin: string, args: string[]): Run {
  const child = spawn(process.execPath, ['--import', pathToFileURL(preload).href, bin, ...args], { cwd: ROOT, stdio: 'pipe' });
  children.push(child);
  let text = '';
  child.stdout.on('data', (chunk: Buffer) => (text += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (text += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  const printed = (pattern: RegExp): Promise<RegExpExecArray> =>
    new Promise((resolve, reject) => {
      const look = (): boolean => {
        const match = pattern.exec(text);
        if (match) resolve(match);
        return match !== null;
      };
      if (look()) return;
      const onData = (): void => void (look() && (child.stdout.off('data', onData), child.stderr.off('data', onData)));
      child.stdout.on('data', onData);
      child.stderr.on('data', onData);
      void exited.then((code) => (look() ? undefined : reject(new Error(`exited ${code} before printing ${pattern}:\n${text}`))));
    });
  return { child, output: () => text, printed, exited };
}

async function toEnd(bin: string, args: string[]): Promise<{ code: number | null; output: string }> {
  const run = withoutBinding(bin, args);
  return { code: await run.exited, output: run.output() };
}

const COMMANDS_RUN = [
  { from: 'the checkout’s sources', bin: (): string => CHECKOUT_BIN },
  { from: 'the package’s bundle', bin: cliBin },
];

describe.each(COMMANDS_RUN)('with the native binding unavailable, from $from', { timeout: 60_000 * busier }, ({ bin: binOf }) => {
  let bin: string;
  beforeAll(() => {
    bin = binOf();
  });

  it('the hook holds: a command that opens the store cannot load', async () => {
    const run = await toEnd(bin, ['store', '--help']);
    expect(run.code).not.toBe(0);
    expect(run.output).toContain(BLOCKED);
  });

  it('conformance, proxy, verdict and receive print their help', async () => {
    const runs = await Promise.all(['conformance', 'proxy', 'verdict', 'receive'].map((command) => toEnd(bin, [command, '--help'])));
    for (const [i, command] of ['conformance', 'proxy', 'verdict', 'receive'].entries()) {
      expect(runs[i]?.code, runs[i]?.output).toBe(0);
      expect(runs[i]?.output).toContain(`Usage: svc-emulator ${command}`);
    }
  });

  it('conformance runs a check against an emulator', async () => {
    const run = await toEnd(bin, ['conformance', '--base-url', base, '--api-key', DEMO_KEY, '--only', 'wire.auth.missing-key', '--fail-on-skip']);
    expect(run.output).not.toContain(BLOCKED);
    expect(run.code, run.output).toBe(0);
    expect(run.output).toMatch(/wire\.auth\.missing-key/);
  });

  it('verdict judges the emulator’s client log', async () => {
    const run = await toEnd(bin, ['verdict', '--base-url', base, '--admin-token', ADMIN]);
    expect(run.output).not.toContain(BLOCKED);
    expect([0, 1], run.output).toContain(run.code);
    expect(run.output).toMatch(/idempoten|retr|poll/i);
  });

  it('proxy forwards a request to the emulator and checks its answer', async () => {
    const proxy = withoutBinding(bin, ['proxy', '--upstream', base, '--port', '0']);
    const [, url] = await proxy.printed(/listening on (http:\/\/\S+)/);
    const res = await fetch(`${url}/v1/tasks/task_nope`, { headers: { Authorization: `Bearer ${DEMO_KEY}` } });
    expect(res.status).toBe(404);
    expect((await res.json()) as unknown).toMatchObject({ error: expect.anything() });
    proxy.child.kill('SIGTERM');
    await proxy.exited;
    expect(proxy.output()).not.toContain(BLOCKED);
  });

  it('receive verifies and accepts a signed callback', async () => {
    const secret = `whsec_${Buffer.from('kit-without-binding-secret-bytes').toString('base64')}`;
    const receiver = withoutBinding(bin, ['receive', '--port', '0', '--secret', secret]);
    const [, url] = await receiver.printed(/listening on (http:\/\/\S+)/);
    const body = JSON.stringify({ type: 'task.succeeded', data: { id: 'task_kit' } });
    const at = new Date();
    const signature = new Webhook(secret).sign('msg_kit', at, body);
    const res = await fetch(url!, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'webhook-id': 'msg_kit', 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': signature },
      body,
    });
    expect(res.status).toBe(200);
    await receiver.printed(/^accepted msg_kit /m);
    receiver.child.kill('SIGTERM');
    await receiver.exited;
    expect(receiver.output()).not.toContain(BLOCKED);
  });
});

describe('the import graph', () => {
  // The kit's folders and commands, with everything they import, lazily or not; the CLI's entry statically only
  // (it imports each command when that command runs).
  const KIT = ['conformance', 'proxy', 'observed', 'recording', 'parity', 'wire', 'points', 'receiver-check'].map((f) => `src/${f}/index.ts`);
  const COMMANDS = ['conformance', 'proxy', 'verdict', 'receive', 'receiver-check'].map((c) => `src/cli/${c}.ts`);
  it.each([...KIT.map((e) => [e, true] as const), ...COMMANDS.map((e) => [e, true] as const), ['src/cli/main.ts', false] as const])(
    '%s reaches neither src/store nor libsql',
    (entry, dynamic) => {
      const from = loaded(entry, dynamic);
      const store = [...from.keys()].filter((m) => m.startsWith('src/store/') || m === 'libsql' || m.startsWith('@libsql/'));
      expect(store.map((m) => chain(from, m))).toEqual([]);
    },
  );
});
