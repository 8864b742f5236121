import { parseTime } from '../clock/index.ts';
import { parseJson, parseSse } from '../wire/index.ts';
import { isPlainObject } from '../contract/index.ts';
import type { HarEntry } from '../recording/index.ts';
import { taskBounds } from './task-bounds.ts';

/** A time in an answer, in ms: an ISO 8601 string, or a number of Unix seconds (`created` of a text call). */
function asMs(value: unknown): number | null {
  if (typeof value === 'string') {
    const ms = parseTime(value);
    return Number.isNaN(ms) ? null : ms;
  }
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value * 1000 : null;
}

/**
 * The latest time an answer shows that had already come when it was sent: `created`, `created_at`, `started_at`,
 * `finished_at` and any other `*_at` but `expires_at` (which lies ahead), anywhere in a JSON body or an event's
 * data. Null when it shows none.
 */
function latestShown(entry: HarEntry): number | null {
  const text = entry.response.content.text;
  if (text === undefined || text === '') return null;
  const bodies = /event-stream/i.test(entry.response.content.mimeType) ? parseSse(text).map((event) => parseJson(event.data)) : [parseJson(text)];
  let latest: number | null = null;
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) return value.forEach(walk);
    if (!isPlainObject(value)) return;
    for (const [key, inner] of Object.entries(value)) {
      const ms = key === 'created' || (key.endsWith('_at') && key !== 'expires_at') ? asMs(inner) : null;
      if (ms !== null) latest = latest === null ? ms : Math.max(latest, ms);
      else walk(inner);
    }
  };
  bodies.forEach(walk);
  return latest;
}

/**
 * When the answer's first byte came (the request's start plus its send and wait): the service decided what the
 * answer shows just before it. A request's start is no measure of that: the time it waited to be handled, which a
 * busy machine stretches, came first. Timing two exchanges by their starts put a submission that waited 200 ms
 * 200 ms early, so a poll answered `processing` 2.9 s after the task was created was replayed 3.1 s after it,
 * past a 3 s task's end (the same moment import-recording reads a task object's times at).
 */
function answeredAt(entry: HarEntry): number {
  const started = Date.parse(entry.startedDateTime);
  if (Number.isNaN(started)) return 0;
  const { send = 0, wait = 0 } = entry.timings ?? {};
  return started + Math.max(0, send) + Math.max(0, wait);
}

/** How far an answer may show a time ahead of the machine's before its clock is taken to be moved by hand. */
const AHEAD_MS = 2000;

/**
 * The service's time at each recorded exchange, in ms on the service's clock, so a replay can move an emulator's
 * clock by the same steps. Two clocks are told apart by the answers' times (`created`, `created_at`,
 * `started_at`, `finished_at`: whole seconds that had already come when the answer was sent):
 * - a service on real time (the real service, an emulator on the real clock): the steps between the moments the
 *   answers came (answeredAt), an answer that shows a later time lifting the estimate to it;
 * - an emulator whose clock was moved by hand (an answer shows a time more than 2 s ahead of the machine's): the
 *   latest time the answers have shown so far, since its clock did not move between the advances, and each
 *   task's changes all show as times in it.
 * Then each answer that shows a task is kept between the task's changes as its task objects time them
 * (task-bounds.ts): a service on real time can answer from a state already due to change.
 */
export function serviceTimes(entries: readonly HarEntry[]): number[] {
  const machine = entries.map(answeredAt);
  const shown = entries.map(latestShown);
  // The service's clock need not be the machine's (an emulator started at another time): measure the offset at
  // the first answer that shows a time.
  const first = shown.findIndex((ms) => ms !== null);
  if (first < 0) return machine;
  const offset = (shown[first] ?? 0) - (machine[first] ?? 0);
  const byHand = shown.some((ms, i) => ms !== null && ms - ((machine[i] ?? 0) + offset) > AHEAD_MS);
  let now = byHand ? (shown[first] ?? 0) : (machine[0] ?? 0) + offset;
  const estimates = machine.map((at, i) => {
    if (i > 0 && !byHand) now += Math.max(0, at - (machine[i - 1] ?? 0));
    now = Math.max(now, shown[i] ?? -Infinity);
    return now;
  });
  // Each answer that shows a task goes between the task's last change it shows and the next (task-bounds.ts); the
  // clock never goes back. The estimate is kept for the entries after, so one late answer moves no other.
  const bounds = taskBounds(entries);
  const times: number[] = [];
  for (const [i, estimate] of estimates.entries()) {
    const [earliest, latest] = bounds.at(i, times);
    times.push(Math.max(times.at(-1) ?? -Infinity, earliest, Math.min(estimate, latest)));
  }
  return times;
}
