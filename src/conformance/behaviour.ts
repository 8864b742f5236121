import { CHECKS, checkHistory, readAnswer } from '../observed/index.ts';
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
  const callbacks = history.callbacks ?? [];
  const texts = history.texts ?? [];
  if (id.startsWith('callbacks.') && callbacks.length === 0) return 'no callback was received (needs a callback receiver: --webhook-listen, or the control API)';
  if (id.startsWith('text.') && texts.length === 0) return 'no text call was answered';
  // Two rules whose evidence the suite brings about only through the control API (a receiver told to fail, a
  // stream cut by a scenario): without it they would pass on no evidence, and count as exercised in the score.
  if (id === 'callbacks.retry.schedule') return callbacks.some((c) => c.answered !== undefined && (c.answered < 200 || c.answered > 299)) ? null : 'no callback delivery was answered other than 2xx (the suite fails deliveries only with the control API)';
  if (id === 'text.stream.error-event') return texts.some((t) => readAnswer(t).errored) ? null : 'no stream ended with an error event (the suite cuts one only with the control API)';
  if (id.startsWith('callbacks.') || id.startsWith('text.')) return null;
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
