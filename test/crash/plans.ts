import type { Task } from './invariants.ts';
import type { WireScenario } from '../support/wire-task.ts';

/**
 * Where a task's scenario takes it on the clock, to judge a task after a restart: how far it must have got by a
 * virtual time the clients saw acknowledged, and how it must end.
 * @see reference "States and transitions", "Limits" (maximum processing time)
 */

const MAX_PROCESSING_SECONDS: Record<string, number> = { 'social-notes-data': 600, 'video-gen-2.0-fast': 3600, 'avatar-photo': 3600 };
/** Seconds after which every task of every scenario has ended: the longest maximum processing time, and a bit. */
export const PAST_EVERY_DEADLINE_SECONDS = 3700;

const RANK: Record<Task['status'], number> = { queued: 0, processing: 1, succeeded: 2, failed: 2, canceled: 2 };
export const rankOf = (status: Task['status']): number => RANK[status];

/**
 * The least progress (0 queued, 1 processing, 2 finished) a task must show once the clock has been at `atMs`: every
 * transition due by then ran, and was stored before the advance that got there was answered. `created_at` has whole
 * seconds, so the task is taken as created as late as it can have been.
 */
export function leastRankAt(scenario: WireScenario, model: string, createdAt: string, atMs: number): number {
  const created = Date.parse(createdAt) + 999;
  const times = scenario.per_model?.[model] ?? {};
  const queueMs = (times.queue_seconds ?? scenario.queue_seconds) * 1000;
  const processingMs = scenario.outcome === 'timeout' ? null : (times.processing_seconds ?? scenario.processing_seconds) * 1000;
  if (created + (MAX_PROCESSING_SECONDS[model] as number) * 1000 <= atMs) return 2;
  const leave = created + queueMs;
  if (leave > atMs) return 0;
  if (scenario.failure?.during === 'queued') return 2;
  return processingMs !== null && leave + processingMs <= atMs ? 2 : 1;
}

/** How a task on `scenario` ends when nothing cancels it: status and error code. */
export function endOf(scenario: WireScenario): { status: Task['status']; code: string | null } {
  if (scenario.outcome === 'timeout') return { status: 'failed', code: 'timeout' };
  if (scenario.outcome === 'failed') return { status: 'failed', code: scenario.failure?.code ?? null };
  return { status: 'succeeded', code: null };
}
