import { HelpRequested, originOption, parseCommandArgs, UsageError } from './args.ts';
import { VERDICT_HELP } from './help.ts';
import { prepareReports, writeReports } from './report-path.ts';
import type { Verdict } from '../verdict/index.ts';

export interface VerdictCommandOptions {
  baseUrl: string;
  adminToken: string;
  key: string | null;
  account: string | null;
  junit: string | null;
  json: string | null;
}

export function parseVerdictOptions(argv: string[], env: NodeJS.ProcessEnv = {}): VerdictCommandOptions {
  const { values } = parseCommandArgs('verdict', argv, {
    'base-url': { type: 'string' },
    'admin-token': { type: 'string' },
    key: { type: 'string' },
    account: { type: 'string' },
    junit: { type: 'string' },
    json: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help) throw new HelpRequested(VERDICT_HELP);
  if (values['base-url'] === undefined) throw new UsageError(`svc-emulator verdict: --base-url URL is required (the emulator's address)\n\n${VERDICT_HELP}`);
  const adminToken = values['admin-token'] ?? env['SVC_EMULATOR_ADMIN_TOKEN'];
  if (!adminToken) throw new UsageError('svc-emulator verdict: --admin-token T is required (or SVC_EMULATOR_ADMIN_TOKEN): the verdict is read from the control API');
  return {
    baseUrl: originOption('verdict', 'base-url', values['base-url']),
    adminToken,
    key: values.key ?? null,
    account: values.account ?? null,
    junit: values.junit ?? null,
    json: values.json ?? null,
  };
}

/**
 * `svc-emulator verdict`: prints each check, writes the reports asked for; exit 1 when a check failed. A report
 * that cannot be written is refused before the verdict is asked for (see `prepareReports`).
 */
export async function verdict(options: VerdictCommandOptions): Promise<number> {
  prepareReports('verdict', [
    { flag: '--junit', path: options.junit },
    { flag: '--json', path: options.json },
  ]);
  const { verdictJunitXml } = await import('../verdict/index.ts');
  const query = new URLSearchParams();
  if (options.key !== null) query.set('key', options.key);
  if (options.account !== null) query.set('account', options.account);
  const address = `${options.baseUrl}/_emulator/verdict${query.size > 0 ? `?${query}` : ''}`;
  let res: Response;
  try {
    res = await fetch(address, { headers: { Authorization: `Bearer ${options.adminToken}` }, signal: AbortSignal.timeout(30_000) });
  } catch (err) {
    throw new UsageError(`svc-emulator verdict: ${options.baseUrl} does not answer (${(err as Error).message})`);
  }
  if (!res.ok) {
    const body = (await res.json().catch(() => null)) as { error?: { code?: string; message?: string } } | null;
    throw new UsageError(`svc-emulator verdict: ${address} answered ${res.status} ${body?.error?.code ?? ''}: ${body?.error?.message ?? ''}`.trim());
  }
  const result = (await res.json()) as Verdict;
  const scope = [options.key !== null ? `key ${options.key.slice(0, 8)}…` : null, options.account !== null ? `account ${options.account}` : null].filter(Boolean).join(', ') || 'every client';
  for (const check of result.checks) {
    const mark = check.status === 'pass' ? 'pass' : check.status === 'fail' ? 'FAIL' : 'n/a ';
    const detail = check.status === 'pass' ? '' : `: ${check.reason ?? ''}${check.evidence.length > 0 ? ` [${check.evidence.join(', ')}]` : ''}`;
    console.log(`${mark} ${check.id}${detail}`);
  }
  console.log(`verdict (${scope}): ${result.counts.pass} passed, ${result.counts.fail} failed, ${result.counts.not_exercised} not exercised`);
  writeReports('verdict', [
    { flag: '--junit', path: options.junit, text: () => verdictJunitXml(result, scope) },
    { flag: '--json', path: options.json, text: () => `${JSON.stringify(result, null, 2)}\n` },
  ]);
  return result.ok ? 0 : 1;
}
