import { leaveWithLauncher } from './launcher.ts';
import { HelpRequested, originOption, parseCommandArgs, UsageError } from './args.ts';
import { PROXY_HELP } from './help.ts';
import { prepareReports, UnwrittenReport, writeReports } from './report-path.ts';
import type { FaultRules } from '../faults/index.ts';
import type { Recorder } from '../recording/index.ts';
import { plural } from '../log/index.ts';
import { DEFAULT_CALLBACK_DEADLINE_MS, DEFAULT_UPSTREAM_TIMEOUT_MS, MAX_UPSTREAM_TIMEOUT_MS } from '../defaults/index.ts';

export interface ProxyCommandOptions {
  upstream: string;
  port: number;
  host: string;
  json: string | null;
  junit: string | null;
  record: string | null;
  keepContent: boolean;
  /** Real ms the upstream has to send its status line; 0: no limit. */
  upstreamTimeoutMs: number;
  /** --relay-callbacks, with its --public-url, --webhook-secret and --callback-deadline-ms; null without it. */
  relay: { publicUrl: string | null; webhookSecret: string | null; callbackDeadlineMs: number } | null;
  /** --admin-url and --admin-token: an emulator's control API, for its clock and its accounts' signing secrets. */
  admin: { url: string; token: string } | null;
  /** --faults FILE: fault rules to inject. */
  faults: string | null;
}

export function parseProxyOptions(argv: string[]): ProxyCommandOptions {
  const { values } = parseCommandArgs('proxy', argv, {
    upstream: { type: 'string' },
    port: { type: 'string' },
    host: { type: 'string' },
    json: { type: 'string' },
    junit: { type: 'string' },
    record: { type: 'string' },
    'keep-content': { type: 'boolean' },
    'upstream-timeout-ms': { type: 'string' },
    'relay-callbacks': { type: 'boolean' },
    'public-url': { type: 'string' },
    'webhook-secret': { type: 'string' },
    'callback-deadline-ms': { type: 'string' },
    'admin-url': { type: 'string' },
    'admin-token': { type: 'string' },
    faults: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help) throw new HelpRequested(PROXY_HELP);
  if (values.upstream === undefined) throw new UsageError(`svc-emulator proxy: --upstream URL is required\n\n${PROXY_HELP}`);
  let upstream: URL;
  try {
    upstream = new URL(values.upstream);
  } catch {
    throw new UsageError(`svc-emulator proxy: --upstream ${values.upstream}: not an address (http://host:port or https://host)`);
  }
  if (upstream.protocol !== 'http:' && upstream.protocol !== 'https:') {
    throw new UsageError(`svc-emulator proxy: --upstream ${values.upstream}: must start with http:// or https://`);
  }
  const port = values.port === undefined ? 4011 : values.port.trim() === '' ? NaN : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`svc-emulator proxy: --port ${values.port ?? ''}: must be 0-65535`);
  if (values['keep-content'] && values.record === undefined) throw new UsageError('svc-emulator proxy: --keep-content goes with --record DIR');
  const timeout = values['upstream-timeout-ms'];
  const upstreamTimeoutMs = timeout === undefined ? DEFAULT_UPSTREAM_TIMEOUT_MS : /^\d+$/.test(timeout) ? Number(timeout) : NaN;
  if (!(upstreamTimeoutMs <= MAX_UPSTREAM_TIMEOUT_MS)) {
    throw new UsageError(`svc-emulator proxy: --upstream-timeout-ms ${timeout === '' ? '""' : timeout ?? ''}: must be a whole number of milliseconds, 0-${MAX_UPSTREAM_TIMEOUT_MS} (0: no limit)`);
  }
  const relaying = values['relay-callbacks'] ?? false;
  for (const flag of ['public-url', 'webhook-secret', 'callback-deadline-ms'] as const) {
    if (values[flag] !== undefined && !relaying) throw new UsageError(`svc-emulator proxy: --${flag} goes with --relay-callbacks`);
  }
  const publicUrl = values['public-url'];
  if (publicUrl !== undefined && !/^https?:$/.test(urlOf(publicUrl)?.protocol ?? '')) {
    throw new UsageError(`svc-emulator proxy: --public-url ${publicUrl}: not an address (http://host:port or https://host)`);
  }
  const secret = values['webhook-secret'];
  if (secret !== undefined && !/^whsec_[A-Za-z0-9+/]+={0,2}$/.test(secret)) {
    throw new UsageError('svc-emulator proxy: --webhook-secret: must be a whsec_ secret (whsec_ and Base64)');
  }
  const deadline = values['callback-deadline-ms'];
  const callbackDeadlineMs = deadline === undefined ? DEFAULT_CALLBACK_DEADLINE_MS : /^\d+$/.test(deadline) ? Number(deadline) : NaN;
  if (!(callbackDeadlineMs <= MAX_CALLBACK_DEADLINE_MS)) {
    throw new UsageError(`svc-emulator proxy: --callback-deadline-ms ${deadline === '' ? '""' : deadline ?? ''}: must be a whole number of milliseconds, 0-${MAX_CALLBACK_DEADLINE_MS}`);
  }
  const adminUrl = values['admin-url'] === undefined ? undefined : originOption('proxy', 'admin-url', values['admin-url']);
  const adminToken = values['admin-token'];
  if (adminUrl !== undefined && !adminToken) throw new UsageError('svc-emulator proxy: --admin-url needs --admin-token (the token the emulator was started with)');
  if (adminToken !== undefined && adminUrl === undefined) throw new UsageError("svc-emulator proxy: --admin-token needs --admin-url (the emulator's address, usually the same as --upstream)");
  return {
    upstream: values.upstream,
    port,
    host: values.host ?? '127.0.0.1',
    json: values.json ?? null,
    junit: values.junit ?? null,
    record: values.record ?? null,
    keepContent: values['keep-content'] ?? false,
    upstreamTimeoutMs,
    relay: relaying ? { publicUrl: publicUrl ?? null, webhookSecret: secret ?? null, callbackDeadlineMs } : null,
    admin: adminUrl !== undefined && adminToken ? { url: adminUrl, token: adminToken } : null,
    faults: values.faults ?? null,
  };
}

/** Thirty days of the deployment's clock: an emulator's advance of a month is the most a test of it waits. */
const MAX_CALLBACK_DEADLINE_MS = 30 * 86_400_000;

function urlOf(text: string): URL | null {
  try {
    return new URL(text);
  } catch {
    return null;
  }
}

/**
 * `svc-emulator proxy`: runs until SIGINT or SIGTERM, then writes the reports and the recording and exits 0 (2, with
 * one line, when a report could not be written then).
 */
export async function proxy(options: ProxyCommandOptions): Promise<void> {
  // Before it listens: reports that could not be written at the end are refused now (see `prepareReports`).
  prepareReports('proxy', [
    { flag: '--json', path: options.json },
    { flag: '--junit', path: options.junit },
  ]);
  const { createProxy, proxyJunitXml } = await import('../proxy/index.ts');
  const { createRecorder } = await import('../recording/index.ts');
  const { machineNow } = await import('../clock/index.ts');
  const startedMs = machineNow();
  let recorder: Recorder | null = null;
  try {
    if (options.record !== null) recorder = createRecorder({ dir: options.record, keepContent: options.keepContent, upstream: options.upstream });
  } catch (err) {
    throw new UsageError(`svc-emulator proxy: --record ${options.record ?? ''}: cannot write there (${(err as Error).message})`);
  }
  let faults: FaultRules | undefined;
  if (options.faults !== null) {
    const { createFaultRules, readFaultFile } = await import('../faults/index.ts');
    const { createContract } = await import('../contract/index.ts');
    let file: ReturnType<typeof readFaultFile>;
    try {
      file = readFaultFile(options.faults, createContract());
    } catch (err) {
      throw new UsageError(`svc-emulator proxy: --faults: ${(err as Error).message}`);
    }
    faults = createFaultRules(() => String(machineNow()));
    faults.add(file.rules, file.seed);
  }
  const relay = options.relay && {
    ...(options.relay.publicUrl !== null ? { publicUrl: options.relay.publicUrl } : {}),
    ...(options.relay.webhookSecret !== null ? { webhookSecret: options.relay.webhookSecret } : {}),
    callbackDeadlineMs: options.relay.callbackDeadlineMs,
  };
  const server = createProxy({
    upstream: options.upstream,
    upstreamTimeoutMs: options.upstreamTimeoutMs,
    ...(recorder ? { onExchange: recorder.onExchange } : {}),
    ...(relay ? { relay } : {}),
    ...(options.admin ? { admin: options.admin } : {}),
    ...(faults ? { faults } : {}),
  });
  const url = await server.listen(options.port, options.host);
  // Before the address is printed: whoever reads it may signal at once, and a signal with no handler kills outright.
  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    void (async () => {
      await server.close();
      const deviations = server.deviations();
      let written: string[] = [];
      let unwritten: UnwrittenReport | null = null;
      try {
        written = writeReports('proxy', [
          { flag: '--json', path: options.json, text: () => `${JSON.stringify({ upstream: server.upstream, exchanges: server.exchanges(), count: deviations.length, data: deviations }, null, 2)}\n` },
          { flag: '--junit', path: options.junit, text: () => proxyJunitXml({ upstream: server.upstream, exchanges: server.exchanges(), deviations, durationMs: machineNow() - startedMs }) },
        ]);
      } catch (err) {
        // The recording is still closed, and the run's counts still said, before the failure's one line.
        if (!(err instanceof UnwrittenReport)) throw err;
        unwritten = err;
        written = err.written;
      }
      const files = recorder ? await recorder.close() : [];
      console.log(`proxy stopped: ${plural(server.exchanges(), 'exchange')} checked, ${plural(deviations.length, 'deviation')}${written.length > 0 ? ` (written to ${written.join(', ')})` : ''}`);
      if (recorder) console.log(files.length > 0 ? `recorded: ${files.join(', ')}` : 'recorded nothing (no exchange passed)');
      if (unwritten) {
        console.error(unwritten.message);
        process.exit(2);
      }
      process.exit(0);
    })().catch((err: unknown) => {
      console.error(`proxy: ${(err as Error).message}`);
      process.exit(1);
    });
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  leaveWithLauncher(stop);
  console.log(`proxy listening on ${url} → ${server.upstream}`);
  if (options.admin) console.log(`stamping with the deployment's clock, read from ${options.admin.url}/_emulator/clock`);
  if (options.relay) {
    const signatures =
      options.relay.webhookSecret !== null
        ? 'signatures checked'
        : options.admin
          ? "signatures checked with the secrets of each key's account, read from the control API"
          : 'signatures not checked (no --webhook-secret or --admin-url)';
    console.log(`relaying task callbacks through ${options.relay.publicUrl ?? url}/_proxy/callbacks/ (${signatures})`);
  }
  if (faults) console.log(`injecting faults: ${faults.list().length} rule(s) from ${options.faults}`);
  if (recorder) console.log(`recording into ${options.record}${options.keepContent ? ' (prompts and outputs kept)' : ' (prompts and outputs redacted)'}`);
}
