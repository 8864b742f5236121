import { checkReceiver, describePlan, planRun, ReceiverCheckOptionError, receiverJunitXml, ReceiverUnreachable, reportLines, resolveOptions, scrub } from '../receiver-check/index.ts';
import type { CheckReceiverOptions, ReceiverCheckReport } from '../receiver-check/index.ts';
import { machineNow } from '../clock/index.ts';
import { createRandom } from '../random/index.ts';
import { HelpRequested, parseCommandArgs, UsageError } from './args.ts';
import { RECEIVER_CHECK_HELP } from './help.ts';
import { prepareReports, writeReports } from './report-path.ts';

export interface ReceiverCheckCommandOptions {
  check: CheckReceiverOptions;
  junit: string | null;
  json: string | null;
  dryRun: boolean;
}

/** The flag of each option the command line gives. */
const FLAGS: Partial<Record<keyof CheckReceiverOptions, string>> = {
  url: '--url',
  secret: '--secret',
  rotatedSecret: '--rotated-secret',
  effectsUrl: '--effects-url',
  only: '--only',
  timeoutMs: '--timeout-ms',
};

const usage = (message: string): UsageError => new UsageError(`svc-emulator receiver-check: ${message}`);

export function parseReceiverCheckOptions(argv: string[], env: NodeJS.ProcessEnv): ReceiverCheckCommandOptions {
  const { values } = parseCommandArgs('receiver-check', argv, {
    url: { type: 'string' },
    secret: { type: 'string' },
    'rotated-secret': { type: 'string' },
    'effects-url': { type: 'string' },
    only: { type: 'string', multiple: true },
    'timeout-ms': { type: 'string' },
    junit: { type: 'string' },
    json: { type: 'string' },
    'dry-run': { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help) throw new HelpRequested(RECEIVER_CHECK_HELP);
  if (values.url === undefined) throw usage(`--url URL is required (the receiver's address)\n\n${RECEIVER_CHECK_HELP}`);
  const secret = values.secret ?? env['SVC_EMULATOR_WEBHOOK_SECRET'];
  if (secret === undefined) throw usage(`--secret whsec_... is required (or SVC_EMULATOR_WEBHOOK_SECRET)\n\n${RECEIVER_CHECK_HELP}`);
  const timeout = values['timeout-ms'];
  if (timeout !== undefined && !/^\d+$/.test(timeout)) throw usage(`--timeout-ms must be a whole number of milliseconds (got ${timeout === '' ? '""' : timeout})`);
  const check: CheckReceiverOptions = {
    url: values.url,
    secret,
    ...(values['rotated-secret'] !== undefined ? { rotatedSecret: values['rotated-secret'] } : {}),
    ...(values['effects-url'] !== undefined ? { effectsUrl: values['effects-url'] } : {}),
    ...(values.only !== undefined ? { only: values.only } : {}),
    ...(timeout !== undefined ? { timeoutMs: Number(timeout) } : {}),
  };
  try {
    resolveOptions(check);
  } catch (err) {
    if (!(err instanceof ReceiverCheckOptionError)) throw err;
    // A secret from the environment is named as such; its value is never repeated.
    const flag = err.option === 'secret' && values.secret === undefined ? 'SVC_EMULATOR_WEBHOOK_SECRET' : (FLAGS[err.option] ?? err.option);
    throw usage(`${flag}: ${err.message}`);
  }
  return { check, junit: values.junit ?? null, json: values.json ?? null, dryRun: values['dry-run'] === true };
}

/**
 * `svc-emulator receiver-check`: sends the battery, prints a line per check, writes the reports asked for; exit 0
 * when no check failed, 1 when one did, 2 when the receiver cannot be reached (one line, nothing judged). A report
 * that cannot be written is refused before anything is sent (see `prepareReports`).
 */
export async function receiverCheck(options: ReceiverCheckCommandOptions): Promise<number> {
  const resolved = resolveOptions(options.check);
  const secrets = [resolved.secret, ...(resolved.rotatedSecret === null ? [] : [resolved.rotatedSecret])];
  const url = scrub(resolved.url.href, secrets);
  if (options.dryRun) {
    for (const line of describePlan(planRun(resolved, createRandom(), machineNow()))) console.log(line);
    return 0;
  }
  prepareReports('receiver-check', [
    { flag: '--junit', path: options.junit },
    { flag: '--json', path: options.json },
  ]);
  let report: ReceiverCheckReport;
  try {
    report = await checkReceiver({
      ...options.check,
      onStart: ({ deliveries, checks }) =>
        console.log(`receiver-check: sending ${deliveries} ${deliveries === 1 ? 'delivery' : 'deliveries'} to ${url} for ${checks === 1 ? 'one check' : `${checks} checks`} (${resolved.timeoutMs} ms to answer each)`),
    });
  } catch (err) {
    if (!(err instanceof ReceiverUnreachable)) throw err;
    console.error(`svc-emulator receiver-check: cannot reach ${url} (${scrub(err.reason, secrets)}); nothing was judged`);
    return 2;
  }
  for (const line of reportLines(report)) console.log(line);
  writeReports('receiver-check', [
    { flag: '--junit', path: options.junit, text: () => scrub(receiverJunitXml(report), secrets) },
    { flag: '--json', path: options.json, text: () => `${scrub(JSON.stringify(report, null, 2), secrets)}\n` },
  ]);
  return report.ok ? 0 : 1;
}
