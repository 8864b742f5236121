import { CHECKS, checkHistory } from '../observed/index.ts';
import type { CheckContext as HistoryContext, CheckInfo, Deviation, History } from '../observed/index.ts';
import { curlOf } from '../wire/index.ts';
import type { Exchange } from '../wire/index.ts';
import type { CheckResult, Group } from './types.ts';

const GROUPS: readonly Group[] = ['wire', 'validation', 'tasks', 'billing', 'lifecycle', 'text', 'callbacks', 'files'];

/**
 * Why a rule of behaviour had nothing to judge in this run, or null when it had: a rule that saw nothing is not
 * run, and says what it would have needed, rather than passing on no evidence.
 */
function nothingToJudge(id: string, history: History): string | null {
  const tasks = history.tasks ?? [];
  const taskRead = tasks.some((t) => (t.answer?.status ?? 200) === 200) || (history.pages ?? []).some((p) => p.items.length > 0);
  if (id.startsWith('callbacks.')) return (history.callbacks ?? []).length > 0 ? null : 'no callback was received (needs a callback receiver: --webhook-listen, or the control API)';
  if (id.startsWith('text.')) return (history.texts ?? []).length > 0 ? null : 'no text call was answered';
  if (id.startsWith('tasks.list.')) return (history.pages ?? []).length > 0 ? null : 'no list page was read';
  if (id.startsWith('tasks.idempotency.')) return tasks.some((t) => t.key) ? null : 'no submission carried an Idempotency-Key';
  if (id === 'billing.refusal.changes-nothing') return tasks.some((t) => t.balance && t.answer) ? null : "the account's balance was not read around a refused request (needs the control API)";
  if (id === 'wire.retry-after.rate-limited') return (history.answers ?? []).some((a) => a.status === 429 && a.code === 'rate_limited') ? null : 'no 429 rate_limited was answered';
  if (id.startsWith('files.result.')) return tasks.some((t) => (t.task as { status?: unknown } | null)?.status === 'succeeded') ? null : 'no succeeded task was read (needs the control API)';
  if (id === 'tasks.isolation.observed') return (history.others ?? []).length > 0 ? null : 'no key of another account was used (needs --second-api-key, or the control API)';
  if (id === 'billing.balance.moves') return tasks.some((t) => t.balance) ? null : "the account's balance was not read around a request (needs the control API)";
  return taskRead ? null : 'no task was read';
}

/**
 * The rules of behaviour (src/observed), judged once over everything the suite's account saw, as results beside
 * the suite's own checks: one per rule, failed with its first deviation (and how many more), naming the requests.
 */
export function behaviourResults(history: History, context: HistoryContext, log: readonly Exchange[], baseUrl: string, selected: (id: string) => boolean): CheckResult[] {
  const deviations = checkHistory(history, context);
  return CHECKS.filter((check) => selected(check.id)).map((check) => resultOf(check, deviations.filter((d) => d.check === check.id), history, log, baseUrl));
}

function resultOf(check: CheckInfo, found: readonly Deviation[], history: History, log: readonly Exchange[], baseUrl: string): CheckResult {
  const prefix = check.id.split('.')[0] as Group;
  const base = { id: check.id, group: GROUPS.includes(prefix) ? prefix : 'tasks', title: check.holds, durationMs: 0 };
  const [first] = found;
  if (first) {
    const exchange = log.find((e) => e.requestId !== null && e.requestId === first.requestIds.at(-1)) ?? null;
    const more = found.length > 1 ? ` (and ${found.length - 1} more)` : '';
    return {
      ...base,
      status: 'failed',
      failure: {
        message: `${first.message}${more}${first.requestIds.length > 0 ? ` [${first.requestIds.join(', ')}]` : ''}`,
        request: exchange ? { method: exchange.method, path: exchange.path, requestId: exchange.requestId } : null,
        curl: exchange ? curlOf(baseUrl, exchange) : null,
      },
    };
  }
  const reason = nothingToJudge(check.id, history);
  return reason ? { ...base, status: 'skipped', reason } : { ...base, status: 'passed' };
}
