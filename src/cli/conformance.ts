import { ConformanceSetupError, coverageLine, failureText, junitXml, runConformance, summaryLine } from '../conformance/index.ts';
import type { SuiteOptions, SuiteReport } from '../conformance/index.ts';
import { HelpRequested, originOption, parseCommandArgs, UsageError } from './args.ts';
import { CONFORMANCE_HELP } from './help.ts';
import { prepareReports, writeReports } from './report-path.ts';

const OPTIONS = {
  'base-url': { type: 'string' },
  'api-key': { type: 'string' },
  'second-api-key': { type: 'string' },
  only: { type: 'string', multiple: true },
  skip: { type: 'string', multiple: true },
  budget: { type: 'string' },
  junit: { type: 'string' },
  json: { type: 'string' },
  'webhook-url': { type: 'string' },
  'webhook-secret': { type: 'string' },
  'webhook-listen': { type: 'string' },
  'admin-url': { type: 'string' },
  'admin-token': { type: 'string' },
  'text-model': { type: 'string' },
  'request-timeout': { type: 'string' },
  'fail-on-skip': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

export type ConformanceOptions = SuiteOptions & { junit?: string; json?: string; failOnSkip?: boolean };

const usage = (message: string): UsageError => new UsageError(`svc-emulator conformance: ${message}`);


/** A whole number within [min, max], or a usage error naming the flag and the value. */
function whole(flag: string, value: string, min: number, max: number, what: string): number {
  const n = /^\d+$/.test(value) ? Number(value) : NaN;
  if (!(n >= min && n <= max)) throw usage(`--${flag} must be ${what} (got ${value})`);
  return n;
}

export function parseConformanceOptions(argv: string[]): ConformanceOptions {
  const { values } = parseCommandArgs('conformance', argv, OPTIONS);
  if (values.help) throw new HelpRequested(CONFORMANCE_HELP);
  if (values['base-url'] === undefined) throw usage('--base-url is required: the deployment, as http://host:port or https://host (svc-emulator conformance --help)');
  const baseUrl = originOption('conformance', 'base-url', values['base-url']);
  const adminUrl = values['admin-url'] === undefined ? undefined : originOption('conformance', 'admin-url', values['admin-url']);
  if (adminUrl && !values['admin-token']) throw usage('--admin-url needs --admin-token (the token the emulator was started with)');
  if (values['admin-token'] && !adminUrl) throw usage('--admin-token needs --admin-url (the emulator, usually the same address as --base-url)');
  if (!values['api-key'] && !adminUrl) {
    throw usage('--api-key is required, unless --admin-url and --admin-token are given (against the emulator the suite then makes its own account)');
  }
  const budget = values.budget;
  if (budget !== undefined && !/^\d+(\.\d{1,3})?$/.test(budget)) throw usage(`--budget must be a number of points, like 2000 or 2000.5 (got ${budget})`);
  const listen = values['webhook-listen'] === undefined ? undefined : whole('webhook-listen', values['webhook-listen'], 0, 65535, 'a port number, 0-65535');
  const timeout = values['request-timeout'] === undefined ? undefined : whole('request-timeout', values['request-timeout'], 1, 86_400_000, 'a whole number of milliseconds');
  const webhookUrl = values['webhook-url'];
  if (webhookUrl !== undefined && !/^https?:\/\/[^/]/i.test(webhookUrl)) throw usage(`--webhook-url must start with http:// or https:// (got ${webhookUrl})`);
  if (webhookUrl && listen === undefined) throw usage('--webhook-url needs --webhook-listen (the local port it reaches)');
  return {
    baseUrl,
    ...(values['api-key'] ? { apiKey: values['api-key'] } : {}),
    ...(values['second-api-key'] ? { secondApiKey: values['second-api-key'] } : {}),
    ...(values.only ? { only: values.only } : {}),
    ...(values.skip ? { skip: values.skip } : {}),
    ...(budget !== undefined ? { budget: Number(budget) } : {}),
    ...(values.junit ? { junit: values.junit } : {}),
    ...(values.json ? { json: values.json } : {}),
    ...(webhookUrl ? { webhookUrl } : {}),
    ...(values['webhook-secret'] ? { webhookSecret: values['webhook-secret'] } : {}),
    ...(listen !== undefined ? { webhookListen: listen } : {}),
    ...(adminUrl && values['admin-token'] ? { admin: { url: adminUrl, token: values['admin-token'] } } : {}),
    ...(values['text-model'] ? { textModel: values['text-model'] } : {}),
    ...(timeout !== undefined ? { requestTimeoutMs: timeout } : {}),
    ...(values['fail-on-skip'] ? { failOnSkip: true } : {}),
  };
}

/** The first line: whose points the suite spends, and how many it may. */
function startLine(options: ConformanceOptions, setup: Pick<SuiteReport, 'account' | 'budget'>): string {
  if (!setup.account) return `running as the given key; budget ${setup.budget} points`;
  const unused = [options.apiKey !== undefined ? '--api-key' : null, options.budget !== undefined ? '--budget' : null].filter((f) => f !== null);
  const note = unused.length > 0 ? ` (${unused.join(' and ')} ${unused.length > 1 ? 'are' : 'is'} for real deployments and not used here)` : '';
  return `running as ${setup.account.id}, a fresh account the control API funded with ${setup.account.points} points: no budget applies${note}`;
}

/**
 * `svc-emulator conformance`: prints progress and failures, writes reports, exits 0, 1 or 2. A report that cannot
 * be written is refused before the suite runs (see `prepareReports`).
 */
export async function conformance(options: ConformanceOptions): Promise<number> {
  prepareReports('conformance', [
    { flag: '--junit', path: options.junit },
    { flag: '--json', path: options.json },
  ]);
  let report: SuiteReport;
  try {
    report = await runConformance({
      ...options,
      onStart: (setup) => console.log(startLine(options, setup)),
      onResult: (r) => {
        if (r.status === 'failed') console.log(failureText(r));
        else console.log(`${r.status === 'passed' ? 'ok  ' : 'skip'} ${r.id}${r.reason ? ` (${r.reason})` : ''}`);
      },
    });
  } catch (err) {
    const said = err instanceof ConformanceSetupError ? (err as Error).message : `cannot run: ${(err as Error).message}`;
    console.error(`svc-emulator conformance: ${said}`);
    return 2;
  }
  // The score first, then what decides the exit: the summary stays the last line, as scripts read it.
  console.log(coverageLine(report));
  const skipped = report.results.filter((r) => r.status === 'skipped');
  const failOnSkip = options.failOnSkip === true && skipped.length > 0;
  if (failOnSkip) console.log(`--fail-on-skip: ${skipped.length} skipped, so this run fails: ${skipped.map((r) => r.id).join(', ')}`);
  console.log(summaryLine(report));
  // After the summary: a report the disk refused now is said on its own line, the results still shown.
  writeReports('conformance', [
    { flag: '--junit', path: options.junit, text: () => junitXml(report) },
    { flag: '--json', path: options.json, text: () => `${JSON.stringify(report, null, 2)}\n` },
  ]);
  return report.failed > 0 || failOnSkip ? 1 : 0;
}
