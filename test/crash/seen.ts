import { expect } from 'vitest';
import type { Acknowledged, Prng } from './acknowledged.ts';
import { clientOf, expectStatus } from './emulator-process.ts';
import { isCut } from './load.ts';
import type { CliEmulator } from './emulator-process.ts';
import { TERMINAL } from './invariants.ts';
import { rankOf } from './plans.ts';
import type { Task } from './invariants.ts';
import type { Received } from '../support/receiver.ts';

/**
 * What clients saw before a kill, beyond what their own requests were answered: other clients polling tasks
 * (`GET /v1/tasks/{id}`), fetching the result files those answers named, and callbacks reaching the receiver.
 * Whatever a whole answer showed was the emulator's word: a restart may find a task further on, never behind it
 * (an end seen, then the task queued again or its points not settled; a result file served, then gone). Seeing
 * a state the store has not made durable yet is a dirty read, and a kill then takes it back.
 */

/** A task as the API shows it (with the result files these checks read). */
export interface TaskView extends Task {
  output: { files: { url: string; cover_url: string | null }[] } | null;
}

export interface SeenTask {
  /** The furthest state a whole answer (or a callback) showed, and where it was seen. */
  task: TaskView;
  where: string;
  key: string;
  /** When that answer had arrived whole (performance.now()). */
  receivedAt: number;
}

export interface Seen {
  tasks: Map<string, SeenTask>;
  /** Result file paths (`/files/{name}`) answered 200, with the task that named them. */
  files: Map<string, string>;
  gets: number;
  /** Called (synchronously) when a read shows a task further on than any answer before it. */
  onAhead: (() => void) | null;
}

export const newSeen = (): Seen => ({ tasks: new Map(), files: new Map(), gets: 0, onAhead: null });

/** Resolves true at the next read that shows a task further on than before, or false after `timeoutMs`. */
export function nextAhead(seen: Seen, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      seen.onAhead = null;
      resolve(false);
    }, timeoutMs);
    seen.onAhead = () => {
      clearTimeout(timer);
      seen.onAhead = null;
      resolve(true);
    };
  });
}

/** The path of an address (a path stays as it is). */
const pathOf = (url: string): string => new URL(url, 'http://any.invalid').pathname;

/** The task without the servers' addresses in its result files. */
function placeless(task: TaskView): TaskView {
  if (!task.output) return task;
  const files = task.output.files.map((f) => ({ ...f, url: pathOf(f.url), cover_url: f.cover_url === null ? null : pathOf(f.cover_url) }));
  return { ...task, output: { ...task.output, files } };
}

/** `now` is not behind `before`: no lower status, and an end (or a start) is final, with its time and points. */
export function expectNotBehind(before: SeenTask, now: TaskView, where: string): void {
  const what = `task ${now.id}: ${before.where} showed it ${before.task.status}, ${where} shows it ${now.status}`;
  expect(rankOf(now.status), what).toBeGreaterThanOrEqual(rankOf(before.task.status));
  if (TERMINAL.has(before.task.status)) {
    expect(placeless(now), `${what}: an end is final`).toEqual(placeless(before.task));
  } else if (before.task.status === 'processing') {
    expect(now.started_at, `${what}: its start`).toBe(before.task.started_at);
  }
}

/**
 * Records what an answer showed, first checking it against what was seen of the task before (live, no kill). Only
 * what had arrived before this request was sent binds it: requests in flight together may be answered in either
 * order, so one sent before a transition can arrive just after another that shows it.
 */
export function see(seen: Seen, task: TaskView, where: string, key: string, sentAt = Infinity): void {
  const before = seen.tasks.get(task.id);
  if (before && before.receivedAt < sentAt) expectNotBehind(before, task, where);
  if (!before || rankOf(task.status) > rankOf(before.task.status)) seen.tasks.set(task.id, { task: placeless(task), where, key, receivedAt: performance.now() });
}

/** Every callback the receiver got shows its task as it ended. */
export function seeCallbacks(seen: Seen, received: Received[], keyOf: Map<string, string>): void {
  for (const got of received) {
    const envelope = JSON.parse(got.raw.toString('utf8')) as { type: string; data: TaskView };
    const key = keyOf.get(envelope.data.id);
    if (envelope.type.startsWith('task.') && key !== undefined) see(seen, envelope.data, `callback ${String(got.headers['webhook-id'])}`, key);
  }
}

export interface Poller {
  /** Rejects as soon as a poll fails other than by the kill (a wrong answer, or a state behind one seen). */
  failed: Promise<never>;
  /** Stops polling; resolves once every poll has ended (one a kill cut off simply failed). */
  stop(): Promise<void>;
}

/**
 * One client per generator, polling acknowledged tasks (mostly recent ones: those are the ones moving) until
 * stopped, each answer recorded in `seen`; when an answer shows result files, one of them is fetched too. A request
 * fails only because the process was killed under it: any other failure fails the test.
 */
export function startPolling(cli: CliEmulator, acked: Acknowledged, seen: Seen, rngs: Prng[]): Poller {
  let stopped = false;
  let fail: (err: unknown) => void = () => undefined;
  const failed = new Promise<never>((_resolve, reject) => (fail = reject));
  // Raced by the caller, or seen at stop().
  failed.catch(() => undefined);
  const poll = async (rng: Prng): Promise<void> => {
    while (!stopped && !cli.child.killed) {
      const tasks = [...acked.tasks.values()];
      if (tasks.length === 0) {
        await new Promise((resolve) => setTimeout(resolve, 5));
        continue;
      }
      const acknowledged = rng.int(4) === 0 ? rng.pick(tasks) : (tasks.slice(-15)[rng.int(Math.min(15, tasks.length))] as (typeof tasks)[number]);
      try {
        await pollOnce(cli.base, acknowledged.id, acknowledged.key, seen, rng);
      } catch (err) {
        // Only the kill may cut a request off; a wrong answer is a failure whenever it came.
        if (!cli.child.killed || !isCut(err)) throw err;
      }
    }
  };
  const errors: unknown[] = [];
  const polls = rngs.map((rng) =>
    poll(rng).catch((err: unknown) => {
      errors.push(err);
      fail(err);
    }),
  );
  return {
    failed,
    async stop() {
      stopped = true;
      await Promise.all(polls);
      if (errors.length > 0) throw errors[0];
    },
  };
}

async function pollOnce(base: string, id: string, key: string, seen: Seen, rng: Prng): Promise<void> {
  const sentAt = performance.now();
  const task = expectStatus<TaskView>(await clientOf(base, key).get(`/v1/tasks/${id}`), 200, `GET /v1/tasks/${id}`);
  seen.gets += 1;
  // Further on than anything seen of it before (a submission is answered queued).
  const ahead = rankOf(task.status) > rankOf(seen.tasks.get(id)?.task.status ?? 'queued');
  see(seen, task, `a GET at ${new Date().toISOString()}`, key, sentAt);
  if (ahead) seen.onAhead?.();
  const files = task.output?.files ?? [];
  if (files.length === 0) return;
  const file = rng.pick(files);
  // At this process's address: a result file's address names the server that made it, and a restart listens on
  // another port here (--port 0).
  const path = pathOf(rng.int(2) === 0 || file.cover_url === null ? file.url : file.cover_url);
  const res = await fetch(`${base}${path}`, { signal: AbortSignal.timeout(15_000) });
  // Read in full: only a whole answer was seen.
  await res.arrayBuffer();
  expect(res.status, `result file ${path} of task ${id}`).toBe(200);
  seen.files.set(path, id);
}
