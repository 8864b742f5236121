import { inOrder, isSubmit, NOT_RETRYABLE, readTask, reSteered, result, retryable, sameRequest, seconds, TERMINAL } from './requests.ts';
import type { Check, ClientRequest } from './types.ts';

type Failure = { reason: string; evidence: string[] };

/** Requests of one key, in order: a verdict judges each key's client on its own. */
function byKey(requests: readonly ClientRequest[]): ClientRequest[][] {
  const keys = new Map<string, ClientRequest[]>();
  for (const r of inOrder(requests)) {
    const list = keys.get(r.key ?? '') ?? [];
    list.push(r);
    keys.set(r.key ?? '', list);
  }
  return [...keys.values()];
}

export const retryAfterRespected: Check = {
  id: 'client.retry-after.respected',
  holds: 'After a 429 with Retry-After, the same key sends nothing before that many seconds have passed.',
  judge(log) {
    const failures: Failure[] = [];
    let exercised = false;
    for (const requests of byKey(log.requests)) {
      requests.forEach((r, i) => {
        if (r.outcome !== 429 || r.retryAfter === null) return;
        exercised = true;
        const until = r.atMs + r.retryAfter * 1000;
        // The refused call steered to another scenario is the test's next step, not the client ignoring the wait.
        const early = requests.slice(i + 1).filter((next) => next.atMs < until && !reSteered(r, next));
        if (early.length > 0) {
          const first = early[0] as ClientRequest;
          failures.push({
            reason: `${early.length} request(s) within Retry-After: ${first.method} ${first.path} ${seconds(first.atMs - r.atMs)} after a 429 that asked for ${r.retryAfter} s`,
            evidence: [r.requestId, ...early.map((e) => e.requestId)],
          });
        }
      });
    }
    return result(this.id, failures, exercised, 'no 429 with Retry-After was answered');
  },
};

export const submitRetriedIdempotently: Check = {
  id: 'client.submit.idempotent-retry',
  holds:
    'A submit retried after a reset, a timeout, a 5xx or a 429 carries the Idempotency-Key of the failed one: the first may have created a task, and only the key makes the retry answer that task instead of creating and charging a second.',
  judge(log, limits) {
    const failures: Failure[] = [];
    let exercised = false;
    for (const requests of byKey(log.requests)) {
      requests.forEach((failed, i) => {
        if (!isSubmit(failed) || !retryable(failed)) return;
        const retry = requests
          .slice(i + 1)
          .find((next) => isSubmit(next) && sameRequest(next, failed) && next.atMs - failed.atMs <= limits.retryWindowMs);
        if (!retry) return;
        exercised = true;
        const what = `a ${failed.outcome}`;
        if (failed.idempotencyKey === null || retry.idempotencyKey === null) {
          failures.push({ reason: `a submit retried after ${what} without an Idempotency-Key`, evidence: [failed.requestId, retry.requestId] });
        } else if (retry.idempotencyKey !== failed.idempotencyKey) {
          failures.push({ reason: `a submit retried after ${what} under another Idempotency-Key`, evidence: [failed.requestId, retry.requestId] });
        }
      });
    }
    return result(this.id, failures, exercised, 'no submit was retried after a failure');
  },
};

export const refusalsNotRetried: Check = {
  id: 'client.errors.not-retried',
  holds: 'A request refused with 401, 402, 403, 404, 409 or 422 is not sent again unchanged: it would be refused again.',
  judge(log, limits) {
    const failures: Failure[] = [];
    let exercised = false;
    for (const requests of byKey(log.requests)) {
      requests.forEach((refused, i) => {
        if (typeof refused.outcome !== 'number' || !NOT_RETRYABLE.has(refused.outcome)) return;
        exercised = true;
        const again = requests
          .slice(i + 1)
          .find((next) => sameRequest(next, refused) && next.idempotencyKey === refused.idempotencyKey && next.atMs - refused.atMs <= limits.retryWindowMs);
        if (again) {
          failures.push({
            reason: `${refused.method} ${refused.path} sent again unchanged after ${refused.outcome} ${refused.errorCode ?? ''}`.trimEnd(),
            evidence: [refused.requestId, again.requestId],
          });
        }
      });
    }
    return result(this.id, failures, exercised, 'no request was refused with 401, 402, 403, 404, 409 or 422');
  },
};

export const retriesBackOff: Check = {
  id: 'client.retries.back-off',
  holds:
    'Retries of one failed request wait longer each time (never a shorter wait than the one before, none under the shortest retry wait) and stay within the attempt budget per window.',
  judge(log, limits) {
    const failures: Failure[] = [];
    let exercised = false;
    for (const requests of byKey(log.requests)) {
      for (const run of retryRuns(requests)) {
        if (run.length < 2) continue;
        exercised = true;
        const ids = run.map((r) => r.requestId);
        const gaps = run.slice(1).map((r, i) => r.atMs - (run[i] as ClientRequest).atMs);
        const crowded = run.findIndex((r, i) => i + limits.maxAttempts < run.length && (run[i + limits.maxAttempts] as ClientRequest).atMs - r.atMs < limits.attemptWindowMs);
        const first = run[0] as ClientRequest;
        if (crowded >= 0) {
          failures.push({ reason: `more than ${limits.maxAttempts} attempts of ${first.method} ${first.path} within ${seconds(limits.attemptWindowMs)}`, evidence: ids });
        } else if (gaps.some((g) => g < limits.minRetryWaitMs)) {
          failures.push({ reason: `${first.method} ${first.path} retried less than ${limits.minRetryWaitMs} ms after a failure`, evidence: ids });
        } else if (gaps.some((g, i) => i > 0 && g < (gaps[i - 1] as number) * 0.75)) {
          failures.push({ reason: `the waits between retries of ${first.method} ${first.path} got shorter (${gaps.join(', ')} ms)`, evidence: ids });
        }
      }
    }
    return result(this.id, failures, exercised, 'no failed request was retried');
  },
};

/** Runs of one request sent again and again, each attempt but the last answered with a retryable failure. */
function retryRuns(requests: readonly ClientRequest[]): ClientRequest[][] {
  const runs: ClientRequest[][] = [];
  const open: ClientRequest[][] = [];
  for (const r of requests) {
    let run = open.find((o) => sameRequest(o[o.length - 1] as ClientRequest, r));
    if (!run) {
      run = [];
      open.push(run);
      runs.push(run);
    }
    run.push(r);
    // A run ends with an answer that is not a retryable failure: what comes after is a new request.
    if (!retryable(r)) open.splice(open.indexOf(run), 1);
  }
  return runs;
}

export const pollingInterval: Check = {
  id: 'client.polling.interval',
  holds:
    'Reads of one task are at least the shortest polling interval apart (3 s by the reference), counting from its submit; the one confirming read after an acknowledged callback is exempt.',
  judge(log, limits) {
    const failures: Failure[] = [];
    let exercised = false;
    const acknowledged = acknowledgedTasks(log.callbacks);
    for (const requests of byKey(log.requests)) {
      const last = new Map<string, ClientRequest>();
      for (const r of requests) {
        if (isSubmit(r) && r.taskId !== null) last.set(r.taskId, r);
        const task = readTask(r);
        if (task === null) continue;
        const before = last.get(task);
        last.set(task, r);
        if (!before) continue;
        const ack = acknowledged.get(task);
        if (ack !== undefined && r.atMs >= ack) continue;
        exercised = true;
        if (r.atMs - before.atMs < limits.minPollIntervalMs) {
          failures.push({
            reason: `task ${task} read ${r.atMs - before.atMs} ms after the previous ${isSubmit(before) ? 'submit' : 'read'} (at least ${limits.minPollIntervalMs} ms)`,
            evidence: [before.requestId, r.requestId],
          });
        }
      }
    }
    return result(this.id, failures, exercised, 'no task was read after its submit');
  },
};

export const pollingStops: Check = {
  id: 'client.polling.stops',
  holds: 'Once a read answered a terminal state (succeeded, failed, canceled), the task is not read again.',
  judge(log) {
    const failures: Failure[] = [];
    let exercised = false;
    for (const requests of byKey(log.requests)) {
      const ended = new Map<string, ClientRequest>();
      for (const r of requests) {
        const task = readTask(r);
        if (task === null) continue;
        const end = ended.get(task);
        if (end) {
          failures.push({ reason: `task ${task} read again after a read answered ${end.taskStatus}`, evidence: [end.requestId, r.requestId] });
          continue;
        }
        if (r.taskStatus !== null && TERMINAL.has(r.taskStatus)) {
          exercised = true;
          ended.set(task, r);
        }
      }
    }
    return result(this.id, failures, exercised, 'no read answered a terminal state');
  },
};

/** When each task's callback was first acknowledged (2xx). */
function acknowledgedTasks(callbacks: Parameters<Check['judge']>[0]['callbacks']): Map<string, number> {
  const acks = new Map<string, number>();
  for (const c of callbacks) {
    if (c.kind !== 'message' || c.taskId === null || typeof c.outcome !== 'number' || c.outcome < 200 || c.outcome > 299) continue;
    acks.set(c.taskId, Math.min(acks.get(c.taskId) ?? Infinity, c.atMs));
  }
  return acks;
}

export const CLIENT_CHECKS: readonly Check[] = [retryAfterRespected, submitRetriedIdempotently, refusalsNotRetried, retriesBackOff, pollingInterval, pollingStops];
