import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, expect, it } from 'vitest';
import { installPacked } from './packed.ts';

// The published types as a TypeScript user meets them: `npm pack`, installed without dev dependencies into an
// empty project that has only TypeScript and @types/node (as any Node project does), and a consumer importing every
// entry point compiled with `strict` and `skipLibCheck: false`. Every declaration file the entry points reach is
// checked, so a library type in the exported surface (express's, big.js's) is an error: those type packages are
// not dependencies of the package, and must not need to be.

const run = promisify(execFile);
const ROOT = new URL('../..', import.meta.url).pathname;
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

const CONSUMER = `import { checkReceiver, createClock, createEmulator, formatTime, openStore, signRequest } from 'svc-emulator';
import type { CheckReceiverOptions, Clock, Control, Emulator, EmulatorOptions, FaultRule, ReceiverCheckReport, SessionHandle, Store, Verdict } from 'svc-emulator';
import { ALL_CHECKS, COVERAGE, junitXml, runConformance } from 'svc-emulator/conformance';
import type { Check, SuiteOptions, SuiteReport } from 'svc-emulator/conformance';
import { createProxy, PROXY_CHECKS, proxyJunitXml } from 'svc-emulator/proxy';
import type { Deviation, EndedExchange, Proxy, ProxyOptions } from 'svc-emulator/proxy';
import { createRecorder, importTasks, readRecording, RecordingError } from 'svc-emulator/recording';
import type { Har, Recording, RecorderOptions } from 'svc-emulator/recording';
import { compareAnswers, PARITY_CHECKS, runParity } from 'svc-emulator/parity';
import type { ParityOptions, ParityReport } from 'svc-emulator/parity';
import { checkReceiver as checkReceiverToo, planRun, resolveOptions } from 'svc-emulator/receiver-check';
import type { ReceiverCheckResult } from 'svc-emulator/receiver-check';

export async function consume(): Promise<string[]> {
  const options: EmulatorOptions = { clock: 'manual' };
  const emulator: Emulator = await createEmulator(options);
  const base: string = await emulator.listen(0);
  const session: SessionHandle = await emulator.createSession({ name: 'consumer' });
  const control: Control = session.control;
  const verdict: Verdict = emulator.verdict();
  const clock: Clock = emulator.clock;
  const suite: SuiteOptions = { baseUrl: base, apiKey: session.key };
  const report: SuiteReport = await runConformance(suite);
  const checks: readonly Check[] = ALL_CHECKS;
  const proxyOptions: ProxyOptions = { upstream: base };
  const proxy: Proxy = createProxy(proxyOptions);
  const parity: ParityOptions = { recording: readRecording('recorded'), baseUrl: base, apiKey: session.key };
  const parityReport: ParityReport = await runParity(parity);
  const receiver: CheckReceiverOptions = { url: \`\${base}/hook\`, secret: session.webhookSecret };
  const receiverReport: ReceiverCheckReport = await checkReceiver(receiver);
  const results: ReceiverCheckResult[] = (await checkReceiverToo(receiver)).checks;
  await emulator.close();
  return [
    formatTime(clock.now()),
    junitXml(report),
    String(checks.length + COVERAGE.length + PROXY_CHECKS.length + Object.keys(PARITY_CHECKS).length + results.length),
    String(verdict.ok),
    String(receiverReport.ok),
    String(parityReport),
    typeof control,
    typeof proxy,
    typeof createClock,
    typeof openStore,
    typeof signRequest,
    typeof proxyJunitXml,
    typeof createRecorder,
    typeof importTasks,
    typeof compareAnswers,
    typeof planRun,
    typeof resolveOptions,
    String(new RecordingError('x') instanceof Error),
  ];
}

export type Surface = [Store, FaultRule, Deviation, EndedExchange, Har, Recording, RecorderOptions];
`;

const TSCONFIG = {
  compilerOptions: {
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    strict: true,
    skipLibCheck: false,
    noEmit: true,
    types: ['node'],
  },
  files: ['consumer.ts'],
};

it('compiles a consumer of every entry point against the packed package with strict and skipLibCheck false', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-types-'));
  dirs.push(dir);
  const app = await installPacked(dir, { name: 'app', version: '1.0.0', private: true, type: 'module' });
  // The consumer's own dev dependency: the declarations use node's types (http.RequestListener, Server).
  await mkdir(join(app, 'node_modules', '@types'), { recursive: true });
  const types = await readdir(join(app, 'node_modules', '@types'));
  // What the install brought is all the consumer has: no type package of the emulator's libraries.
  expect(types).not.toContain('express');
  expect(types).not.toContain('big.js');
  await symlink(join(ROOT, 'node_modules', '@types', 'node'), join(app, 'node_modules', '@types', 'node'));
  await writeFile(join(app, 'tsconfig.json'), JSON.stringify(TSCONFIG, null, 2));
  await writeFile(join(app, 'consumer.ts'), CONSUMER);

  const compiled = await run(process.execPath, [TSC, '-p', app], { cwd: app }).then(
    ({ stdout }) => stdout,
    (err: { stdout?: string; message: string }) => err.stdout || err.message,
  );
  expect(compiled).toBe('');
}, 120_000);
