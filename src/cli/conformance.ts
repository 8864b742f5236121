import { writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { failureText, junitXml, runConformance, summaryLine } from '../conformance/index.ts';
import type { SuiteOptions } from '../conformance/index.ts';
import { HelpRequested, UsageError } from './start-options.ts';
import { CONFORMANCE_HELP } from './help.ts';


export function parseConformanceOptions(argv: string[]): SuiteOptions & { junit?: string; json?: string } {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
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
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) throw new HelpRequested(CONFORMANCE_HELP);
  const baseUrl = values['base-url']?.replace(/\/+$/, '');
  if (!baseUrl || !/^https?:\/\//.test(baseUrl)) throw new UsageError(`--base-url http(s)://… is required\n\n${CONFORMANCE_HELP}`);
  if (!values['api-key']) throw new UsageError(`--api-key is required\n\n${CONFORMANCE_HELP}`);
  const budget = values.budget === undefined ? undefined : Number(values.budget);
  if (budget !== undefined && !(budget >= 0)) throw new UsageError(`--budget must be a number of points, got ${values.budget}`);
  const listen = values['webhook-listen'] === undefined ? undefined : Number(values['webhook-listen']);
  if (listen !== undefined && !(Number.isInteger(listen) && listen >= 0 && listen < 65536)) throw new UsageError(`--webhook-listen must be a port`);
  const requestTimeout = values['request-timeout'] === undefined ? undefined : Number(values['request-timeout']);
  if (requestTimeout !== undefined && !(Number.isInteger(requestTimeout) && requestTimeout > 0)) throw new UsageError('--request-timeout must be milliseconds');
  if (values['admin-url'] && !values['admin-token']) throw new UsageError('--admin-url needs --admin-token');
  if (values['webhook-url'] && listen === undefined) throw new UsageError('--webhook-url needs --webhook-listen (the local port it reaches)');
  return {
    baseUrl,
    apiKey: values['api-key'],
    ...(values['second-api-key'] ? { secondApiKey: values['second-api-key'] } : {}),
    ...(values.only ? { only: values.only } : {}),
    ...(values.skip ? { skip: values.skip } : {}),
    ...(budget !== undefined ? { budget } : {}),
    ...(values.junit ? { junit: values.junit } : {}),
    ...(values.json ? { json: values.json } : {}),
    ...(values['webhook-url'] ? { webhookUrl: values['webhook-url'] } : {}),
    ...(values['webhook-secret'] ? { webhookSecret: values['webhook-secret'] } : {}),
    ...(listen !== undefined ? { webhookListen: listen } : {}),
    ...(values['admin-url'] && values['admin-token'] ? { admin: { url: values['admin-url'].replace(/\/+$/, ''), token: values['admin-token'] } } : {}),
    ...(values['text-model'] ? { textModel: values['text-model'] } : {}),
    ...(requestTimeout !== undefined ? { requestTimeoutMs: requestTimeout } : {}),
  };
}

/** `svc-emulator conformance`: prints progress and failures, writes reports, exits 0, 1 or 2. */
export async function conformance(options: ReturnType<typeof parseConformanceOptions>): Promise<number> {
  let report;
  try {
    report = await runConformance({
      ...options,
      onResult: (r) => {
        if (r.status === 'failed') console.log(failureText(r));
        else console.log(`${r.status === 'passed' ? 'ok  ' : 'skip'} ${r.id}${r.reason ? ` (${r.reason})` : ''}`);
      },
    });
  } catch (err) {
    console.error(`svc-emulator conformance: cannot run: ${(err as Error).message}`);
    return 2;
  }
  if (options.junit) await writeFile(options.junit, junitXml(report));
  if (options.json) await writeFile(options.json, `${JSON.stringify(report, null, 2)}\n`);
  console.log(summaryLine(report));
  return report.failed > 0 ? 1 : 0;
}
