import { VERSION } from '../version.ts';
import { COMMANDS, CONFORMANCE_HELP, IMPORT_RECORDING_HELP, PARITY_HELP, PROXY_HELP, RECEIVE_HELP, RECEIVER_CHECK_HELP, STORE_HELP, VERDICT_HELP } from './help.ts';
import { HelpRequested, notACommand, UsageError } from './args.ts';

// Nothing here imports the emulator's folders (the start options, the scenarios, the store) statically: the kit's
// commands (conformance, proxy, verdict, receive, receiver-check) must run where the store's native binding cannot
// load.
const help = (startHelp: string): string => `svc-emulator ${VERSION}: a local emulator of the content-generation service API

Usage: svc-emulator <command> [options]

Commands:
  start     run the emulator (svc-emulator start --help for its options)
  receive   a local callback receiver that verifies signatures (svc-emulator receive --help)
  conformance  check a deployment against the contract (svc-emulator conformance --help)
  store     check, back up, restore or export a store file (svc-emulator store --help)
  proxy     forward to a deployment, check every answer against the contract, record the traffic (svc-emulator proxy --help)
  import-recording  turn a recording into scenarios and text answers the emulator replays (svc-emulator import-recording --help)
  parity    replay a recording against a deployment and report each answer that differs (svc-emulator parity --help)
  verdict   judge how a client coped: retries, idempotency, backoff, polling, its callback receiver (svc-emulator verdict --help)
  receiver-check  send any webhook receiver a battery of signed callbacks and judge its answers (svc-emulator receiver-check --help)

${startHelp}
${RECEIVE_HELP}
${CONFORMANCE_HELP}
${STORE_HELP}
${PROXY_HELP}
${IMPORT_RECORDING_HELP}
${PARITY_HELP}
${VERDICT_HELP}
${RECEIVER_CHECK_HELP}`;

/** Exit codes: 0 success, 2 usage or configuration error. */
async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  try {
    if (command === '--version' || command === '-v') return void console.log(VERSION);
    if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
      return void console.log(help((await import('./start-options.ts')).START_HELP));
    }
    // Each command's modules load only when it runs: a start does not pay for the conformance suite.
    if (command === 'start') {
      const options = (await import('./start-options.ts')).parseStartOptions(rest, process.env);
      return await (await import('./start.ts')).start(options);
    }
    if (command === 'receive') {
      const { parseReceiveOptions, receive } = await import('./receive.ts');
      return await receive(parseReceiveOptions(rest, process.env));
    }
    if (command === 'conformance') {
      const { conformance, parseConformanceOptions } = await import('./conformance.ts');
      process.exit(await conformance(parseConformanceOptions(rest)));
    }
    if (command === 'store') process.exit(await (await import('./store.ts')).storeCommand(rest));
    if (command === 'proxy') {
      const { parseProxyOptions, proxy } = await import('./proxy.ts');
      return await proxy(parseProxyOptions(rest));
    }
    if (command === 'import-recording') {
      const { importRecording, parseImportRecordingOptions } = await import('./import-recording.ts');
      return await importRecording(parseImportRecordingOptions(rest));
    }
    if (command === 'parity') {
      const { parity, parseParityOptions } = await import('./parity.ts');
      process.exit(await parity(parseParityOptions(rest)));
    }
    if (command === 'verdict') {
      const { parseVerdictOptions, verdict } = await import('./verdict.ts');
      process.exit(await verdict(parseVerdictOptions(rest, process.env)));
    }
    if (command === 'receiver-check') {
      const { parseReceiverCheckOptions, receiverCheck } = await import('./receiver-check.ts');
      process.exit(await receiverCheck(parseReceiverCheckOptions(rest, process.env)));
    }
    throw notACommand(command, COMMANDS);
  } catch (err) {
    if (err instanceof HelpRequested) {
      console.log(err.message);
      process.exit(0);
    }
    if (err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      console.error((err as Error).message);
      process.exit(2);
    }
    const line = command !== undefined && EMULATOR_COMMANDS.has(command) ? await emulatorErrorLine(err) : null;
    if (line !== null) {
      console.error(line);
      process.exit(2);
    }
    throw err;
  }
}

/** The commands that read scenario files or open a store: the only ones whose errors are the scenarios' or the store's. */
const EMULATOR_COMMANDS = new Set(['start', 'store', 'import-recording']);

/**
 * The one line a scenario file's or the store's error ends a command with (exit 2), or null for another error. Its
 * modules are loaded by then (the command that threw them imported them), so importing them here costs nothing.
 */
async function emulatorErrorLine(err: unknown): Promise<string | null> {
  const [{ ScenarioFileError }, { StoreDamageError, StoreFullError, StoreOpenError }] = await Promise.all([
    import('../scenarios/index.ts'),
    import('../store/index.ts'),
  ]);
  if (err instanceof ScenarioFileError) return `svc-emulator: bad scenario file: ${err.message}`;
  // A store command (export, backup) that met damage or a full disk: one line, as every store problem.
  if (err instanceof StoreOpenError || err instanceof StoreDamageError || err instanceof StoreFullError) return `svc-emulator: ${err.message}`;
  return null;
}

await main(process.argv.slice(2));
