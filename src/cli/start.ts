import { constants } from 'node:os';
import { boundHeap } from './heap-growth.ts';
import { leaveWithLauncher } from './launcher.ts';
import { machineNow } from '../clock/index.ts';
import { START_DEFAULTS } from '../defaults/index.ts';
import { createEmulator } from '../emulator/index.ts';
import type { Emulator } from '../emulator/index.ts';
import { createLogger } from '../log/index.ts';
import { budgetText } from '../server/index.ts';
import { VERSION } from '../version.ts';
import { prepareReports } from './report-path.ts';
import type { StartOptions } from './start-options.ts';

/**
 * `svc-emulator start`: listens, prints where and with which demo key, and shuts down cleanly on SIGTERM or
 * SIGINT (see `Emulator.close`): exit 0 once the store is flushed; a second signal exits at once with 128 + its
 * number.
 */
export async function start(options: StartOptions): Promise<void> {
  boundHeap();
  // The state document written at the stop: a folder that cannot hold it is refused now, not found out at the end.
  prepareReports('start', [{ flag: '--export-on-exit', path: options.exportOnExit }]);
  // Log times come from the emulator's clock (its wall time) once it exists; lines before that (an imported
  // journal, say) are stamped with the machine's time rather than 00:00:00.000.
  let wallNow = machineNow;
  const logger = createLogger({ level: options.logLevel, format: options.logFormat, now: () => wallNow() });
  // From the start: a signal while the emulator is still being built would otherwise kill the process.
  // What a person reads (the banner, the shutdown lines) is printed at `info`: `--log-level warn` is quiet.
  const chatty = logger.enabled?.('info') ?? true;
  const say = (line: string): void => {
    if (chatty) console.log(line);
  };
  const closeOnSignal = onSignals(options.shutdownGraceMs ?? START_DEFAULTS.shutdownGraceMs, say);
  for (const warning of options.connections.warnings) logger.warn(warning);
  const emulator = await createEmulator({ ...options, logger });
  wallNow = () => emulator.clock.wallNow();
  // Before listening: whoever sees the address may signal at once.
  if (closeOnSignal(emulator)) return;
  let url: string;
  try {
    url = await emulator.listen(options.port, options.host);
  } catch (err) {
    // A port in use (or one the user may not bind) is a start-up failure like any other: one line, exit 2.
    const where = `${options.host}:${options.port}`;
    const code = (err as NodeJS.ErrnoException).code;
    const why = LISTEN_ERRORS[code ?? ''] ?? (err as Error).message;
    console.error(`svc-emulator: cannot listen on ${where}: ${why}`);
    await emulator.close();
    process.exit(2);
  }
  const demo = emulator.internals.db.keys.ofAccount('acct_demo');
  const account = emulator.internals.db.accounts.get('acct_demo');
  const lines = [
    `svc-emulator ${VERSION} listening on ${url}`,
    `  store        ${emulator.internals.store.kind === 'file' ? emulator.internals.store.path : 'memory'}`,
    `  clock        ${emulator.clock.mode}${emulator.clock.speed !== 1 ? ` ×${emulator.clock.speed}` : ''}`,
    ...(account ? [`  demo account ${account.id} (${account.available} points available)`] : []),
    ...demo.map((k) => `  demo key     ${k.key}`),
    ...(account ? [`  webhooks     signed with ${account.webhook_secret} (the demo account's secret)`] : []),
    `  dashboard    ${url}/_emulator/ui`,
    ...sessionsLine(emulator),
    ...(options.faults !== undefined ? [`  faults       ${emulator.control.faults.list().data.length} rule(s) from ${options.faults}`] : []),
    `  connections  at most ${options.connections.max} (${options.connections.given ?? budgetText(options.connections.budget)})`,
    // A token the user chose is theirs to know (and sits in their environment or config): shown masked.
    `  admin token  ${options.adminToken === undefined ? emulator.adminToken : masked(emulator.adminToken)}`,
    `  try          curl -H "Authorization: Bearer ${demo[0]?.key ?? '<key>'}" ${url}/v1/tasks`,
  ];
  // Below info, one line still tells a script (or a user of --port 0) where to call, `silent` included: it is the
  // command's answer, not a log line.
  console.log(chatty ? lines.join('\n') : lines[0]);
}

/** The sessions a restart built again from the store, if any (a fresh start has none). */
function sessionsLine(emulator: Emulator): string[] {
  const listed = emulator.sessions.list().data;
  return listed.length === 0 ? [] : [`  sessions     ${listed.length} kept in the store (GET /_emulator/sessions)`];
}

const LISTEN_ERRORS: Record<string, string> = {
  EADDRINUSE: 'the address is in use (another process listens there; choose another with --port)',
  EACCES: 'not allowed to listen there (ports below 1024 need privileges)',
  EADDRNOTAVAIL: 'no such address on this machine (see --host)',
};

function masked(token: string): string {
  return token.length <= 8 ? '(as given)' : `${token.slice(0, 4)}…${token.slice(-2)} (as given)`;
}

/**
 * Handles SIGTERM and SIGINT from now on; the emulator to close is handed over once it exists (a signal that
 * came before is acted on then; the call answers true, and the start goes no further).
 */
function onSignals(graceMs: number, say: (line: string) => void): (emulator: Emulator) => boolean {
  let emulator: Emulator | null = null;
  let signaled: NodeJS.Signals | null = null;
  const close = (signal: NodeJS.Signals, running: Emulator): void => {
    // close() stops listening before it returns its promise, so once this line is out, connections are refused.
    running.close().then(
      () => {
        say('svc-emulator: closed, store flushed');
        process.exit(0);
      },
      (err: unknown) => {
        console.error(err);
        process.exit(1);
      },
    );
    say(`svc-emulator: ${signal}, closing: no new connections; requests in flight have ${graceMs} ms (${signal} again exits now)`);
  };
  const shutdown = (signal: 'SIGINT' | 'SIGTERM'): void => {
    if (signaled) {
      // A second signal: stop waiting. Nothing acknowledged is lost: every change is written before its answer.
      say(`svc-emulator: ${signal} again, exiting now`);
      process.exit(128 + constants.signals[signal]);
    }
    signaled = signal;
    if (emulator) close(signal, emulator);
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  leaveWithLauncher(() => shutdown('SIGTERM'));
  return (created) => {
    emulator = created;
    if (signaled) close(signaled, created);
    return signaled !== null;
  };
}
