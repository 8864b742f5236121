import type { CheckInfo, Deviation } from './history.ts';
import { idsOf, isRecord, named, timeMs } from './task-view.ts';
import type { TaskRead } from './task-view.ts';

export const RESULT_CHECKS = {
  videoRecords: {
    id: 'files.result.record-fields',
    holds: 'a succeeded video-gen-2.0-fast or avatar-photo task has output.files as a list of video records, each with type video, a video mime_type, url and cover_url addresses, size in whole bytes, width and height in pixels, duration in seconds, expires_at a time after finished_at',
  },
  textOnly: { id: 'files.result.text-only-empty', holds: 'a succeeded social-notes-data task (a text-only model) has output.files as an empty list' },
} as const satisfies Record<string, CheckInfo>;
const C = RESULT_CHECKS;

/** The models whose result the reference says is video records ("Result: output.files has video records"). */
const VIDEO_MODELS: readonly unknown[] = ['video-gen-2.0-fast', 'avatar-photo'];
const TEXT_ONLY_MODELS: readonly unknown[] = ['social-notes-data'];
const BEIJING = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?\+08:00$/;

const isAddress = (value: unknown): boolean => typeof value === 'string' && /^https?:\/\/[^/]/.test(value);
const isWhole = (value: unknown, min: number): boolean => typeof value === 'number' && Number.isInteger(value) && value >= min;

/**
 * The result files of one task, judged on its first succeeded read (a terminal task never changes: the
 * lifecycle rules hold the later reads to it).
 * @see reference "File record", "output object"; each model's Result
 */
export function checkResults(id: string, reads: readonly TaskRead[]): Deviation[] {
  const read = reads.find((r) => r.view.status === 'succeeded' && isRecord(r.view.output));
  if (!read || !isRecord(read.view.output)) return [];
  const { model } = read.view;
  const files = read.view.output.files;
  const where = `succeeded ${String(model)} task ${id} (${named(read.obs)})`;
  const found = (check: CheckInfo, problem: string): Deviation[] => [{ check: check.id, message: `${where}: ${problem}`, requestIds: idsOf(read.obs) }];
  if (TEXT_ONLY_MODELS.includes(model)) return Array.isArray(files) && files.length === 0 ? [] : found(C.textOnly, `output.files is ${JSON.stringify(files)}, not an empty list`);
  if (!VIDEO_MODELS.includes(model)) return [];
  // An empty list is not judged here (the suite's files.result.* checks hold a video to having its record).
  if (!Array.isArray(files)) return found(C.videoRecords, `output.files is ${JSON.stringify(files)}, not a list of video records`);
  const problems = files.flatMap((record, i) => recordProblems(record, read.view.finishedAt).map((p) => `output.files[${i}] ${p}`));
  return problems.length === 0 ? [] : found(C.videoRecords, problems.join('; '));
}

/** What is wrong with one video record; empty when nothing is. */
function recordProblems(record: unknown, finishedAt: unknown): string[] {
  if (!isRecord(record)) return [`is ${JSON.stringify(record)}, not a record`];
  const problems: string[] = [];
  const want = (ok: boolean, field: string, expected: string): void => {
    if (!ok) problems.push(`${field} is ${field in record ? JSON.stringify(record[field]) : 'missing'}, expected ${expected}`);
  };
  want(record.type === 'video', 'type', 'video');
  want(typeof record.mime_type === 'string' && record.mime_type.startsWith('video/'), 'mime_type', 'a video type');
  want(isAddress(record.url), 'url', 'an address');
  want(isWhole(record.size, 0), 'size', 'whole bytes');
  want(isWhole(record.width, 1), 'width', 'pixels');
  want(isWhole(record.height, 1), 'height', 'pixels');
  want(typeof record.duration === 'number' && record.duration >= 0, 'duration', 'seconds');
  want(isAddress(record.cover_url), 'cover_url', 'the cover image address');
  const expires = typeof record.expires_at === 'string' && BEIJING.test(record.expires_at) ? timeMs(record.expires_at) : null;
  const finished = timeMs(finishedAt);
  want(expires !== null && (finished === null || expires > finished), 'expires_at', `a time (+08:00) after finished_at ${String(finishedAt)}`);
  return problems;
}
