import { readSeed } from '../accounts/index.ts';
import { HelpRequested, originOption, parseCommandArgs, UsageError } from './args.ts';
import { PARITY_HELP } from './help.ts';
import { prepareReports, writeReports } from './report-path.ts';

export interface ParityCommandOptions {
  /** A .har file or a directory of them. */
  recording: string;
  baseUrl: string;
  apiKey: string;
  adminToken: string | null;
  scenarios: 'recorded' | 'none';
  json: string | null;
  junit: string | null;
}

const usage = (message: string): UsageError => new UsageError(`svc-emulator parity: ${message}`);

/** The emulator's demo key, as fixtures/seed.json seeds it. */
const demoKey = (): string => readSeed().accounts[0]?.keys[0] ?? 'sk-emulator-demo';


export function parseParityOptions(argv: string[]): ParityCommandOptions {
  const { values, positionals } = parseCommandArgs(
    'parity',
    argv,
    {
      'base-url': { type: 'string' },
      'api-key': { type: 'string' },
      'admin-token': { type: 'string' },
      scenarios: { type: 'string' },
      json: { type: 'string' },
      junit: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    true,
  );
  if (values.help) throw new HelpRequested(PARITY_HELP);
  if (positionals.length === 0) throw usage('which recording? svc-emulator parity DIR --base-url URL (DIR: a .har file or a directory of them)');
  if (positionals.length > 1) throw usage(`one recording at a time (got ${positionals.join(' ')}); a directory's .har files are read together`);
  if (values['base-url'] === undefined) throw usage('--base-url is required: the deployment to replay against, as http://host:port (svc-emulator parity --help)');
  const scenarios = values.scenarios ?? 'none';
  if (scenarios !== 'recorded' && scenarios !== 'none') throw usage(`--scenarios must be recorded or none (got ${scenarios})`);
  if (scenarios === 'recorded' && !values['admin-token']) throw usage('--scenarios recorded needs --admin-token (the scenarios are listed by the control API)');
  if (values['api-key'] === '') throw usage('--api-key is empty');
  return {
    recording: positionals[0] ?? '',
    baseUrl: originOption('parity', 'base-url', values['base-url']),
    apiKey: values['api-key'] ?? demoKey(),
    adminToken: values['admin-token'] || null,
    scenarios,
    json: values.json || null,
    junit: values.junit || null,
  };
}

/**
 * `svc-emulator parity`: replays, prints the report, writes the files; 0 when all agreed, 1 when not, 2 when it
 * cannot run (a report that cannot be written among them, refused before the replay: see `prepareReports`).
 */
export async function parity(options: ParityCommandOptions): Promise<number> {
  prepareReports('parity', [
    { flag: '--json', path: options.json },
    { flag: '--junit', path: options.junit },
  ]);
  const { readRecording, RecordingError } = await import('../recording/index.ts');
  const { junitXml, ParitySetupError, ParityUnreachable, reportText, runParity } = await import('../parity/index.ts');
  let report;
  try {
    const recording = readRecording(options.recording);
    if (recording.entries.length === 0) throw new RecordingError(`${options.recording}: the recording holds no exchanges`);
    report = await runParity({
      recording,
      baseUrl: options.baseUrl,
      apiKey: options.apiKey,
      ...(options.adminToken !== null ? { adminToken: options.adminToken } : {}),
      scenarios: options.scenarios,
    });
  } catch (err) {
    if (err instanceof RecordingError || err instanceof ParityUnreachable || err instanceof ParitySetupError) {
      console.error(`svc-emulator parity: ${err.message}`);
      return 2;
    }
    throw err;
  }
  console.log(reportText(report));
  const replayed = report;
  writeReports('parity', [
    { flag: '--json', path: options.json, text: () => `${JSON.stringify(replayed, null, 2)}\n` },
    { flag: '--junit', path: options.junit, text: () => junitXml(replayed) },
  ]);
  return report.differed > 0 ? 1 : 0;
}
