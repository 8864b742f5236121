import { isPlainObject } from '../contract/index.ts';
import type { Scenario, ScenarioMatch } from '../scenarios/index.ts';
import type { Recording } from './read.ts';
import { redactedText } from './recorded-content.ts';
import { seenTasks } from './recorded-tasks.ts';
import type { SeenTask, TaskBody } from './recorded-tasks.ts';
import { described, recordedTaskScenario } from './scenario-file.ts';
import type { Imported, ScenarioEntry, Skipped } from './scenario-file.ts';

/** The codes a scenario's failure may have, and its longest phase: the Scenario schema's limits (openapi/admin.yaml). */
const FAILURE_CODES = new Set(['invalid_params', 'content_rejected', 'insufficient_points', 'timeout', 'service_unavailable', 'capacity_shortage', 'generation_failed', 'no_result']);
const MAX_SECONDS = 31_536_000;
/** A phase's seconds between two moments, never negative nor over the schema's maximum. */
const seconds = (fromMs: number, toMs: number): number => Math.min(MAX_SECONDS, Math.max(0, Math.round(toMs - fromMs) / 1000));
/** Epoch milliseconds of a task object's time, or undefined for null or an unreadable one. */
const timeOf = (value: unknown): number | undefined => {
  const ms = typeof value === 'string' ? Date.parse(value) : NaN;
  return Number.isNaN(ms) ? undefined : ms;
};

/**
 * One scenario per recorded task that finished while recorded, named `recorded-<task id>` (lower case). Times come
 * from the task objects' created_at, started_at and finished_at (whole seconds, exact however sparse the polls);
 * without them, from when an answer first showed the change (then they are bounds). A `timeout` failure is kept
 * as `failed` with code `timeout` at its recorded time, which the emulator's own deadline can only bring forward
 * (with the same code). A task the client canceled never ends on its own here (outcome `timeout`), so the same
 * cancel reproduces it, `cancelable_while_processing` when it was canceled while processing. Kept content gives
 * a match rule (the model and the input's scalar values); a redacted recording gives none.
 */
export function importTasks(recording: Recording): Imported {
  const scenarios: ScenarioEntry[] = [];
  const skipped: Skipped[] = [];
  const rules = new Set<string>();
  const names = new Map<string, string>();
  let redacted = 0;
  for (const task of seenTasks(recording)) {
    const last = task.seen.at(-1)?.body;
    // Ids that differ only in case or in characters a name cannot hold give one name: a start refuses it twice.
    const taken = names.get(recordedTaskScenario(task.id));
    if (taken !== undefined) {
      skipped.push({ what: 'task', id: task.id, reason: `the same scenario name as task ${taken}` });
      continue;
    }
    const status = last?.status;
    if (!last) {
      skipped.push({ what: 'task', id: task.id, reason: 'no task object in its answers' });
      continue;
    }
    if (status !== 'succeeded' && status !== 'failed' && status !== 'canceled') {
      skipped.push({ what: 'task', id: task.id, reason: `still ${status ?? 'unknown'} when the recording ended` });
      continue;
    }
    const code = last.error?.code;
    if (status === 'failed' && (typeof code !== 'string' || !FAILURE_CODES.has(code))) {
      skipped.push({ what: 'task', id: task.id, reason: `failure code ${String(code)} unknown to the emulator` });
      continue;
    }
    let match: ScenarioMatch | undefined;
    if (task.redacted) redacted += 1;
    else {
      const rule = matchOf(task, last);
      const key = JSON.stringify(rule);
      // A second task with the same request could never be matched: it is reachable by name only.
      if (rule && !rules.has(key)) match = rule;
      rules.add(key);
    }
    names.set(recordedTaskScenario(task.id), task.id);
    scenarios.push(taskScenario(task, last, status, match));
  }
  return { scenarios, skipped, redacted };
}

function taskScenario(task: SeenTask, last: TaskBody, status: 'succeeded' | 'failed' | 'canceled', match: ScenarioMatch | undefined): ScenarioEntry {
  const first = (field: 'created_at' | 'started_at'): number | undefined => task.seen.map((s) => timeOf(s.body[field])).find((t) => t !== undefined);
  // Without a time in the bodies: the answer that first showed the change (the submission's, for created).
  const firstSeen = (shown: (body: TaskBody) => boolean): number | undefined => task.seen.find((s) => shown(s.body))?.atMs;
  const createdMs = first('created_at') ?? task.seen[0]?.atMs ?? 0;
  const startedMs = first('started_at') ?? firstSeen((b) => b.status !== 'queued' && b.started_at !== null);
  const finishedMs = timeOf(last.finished_at) ?? firstSeen((b) => b.status === status) ?? createdMs;
  const started = startedMs !== undefined;
  const queued = seconds(createdMs, started ? startedMs : finishedMs);
  const processing = started ? seconds(startedMs, finishedMs) : 0;
  let phases = started ? `queued ${queued} s, processing ${processing} s` : `queued ${queued} s`;
  const refused = task.cancels.includes(409) ? '; a cancel was refused' : '';
  const about = (ending: string): Pick<ScenarioEntry, 'name' | 'description' | 'match'> => ({
    name: recordedTaskScenario(task.id),
    description: described(`Recorded ${String(last.model ?? task.model ?? 'unknown model')} task ${task.id}: ${phases}, ${ending}${refused}.`),
    ...(match ? { match } : {}),
  });
  if (status === 'canceled') {
    // What would have followed the cancel is not in the recording: here the task waits for the same cancel, and
    // the model's maximum processing time ends it when none comes.
    phases = started ? `queued ${queued} s, canceled after ${processing} s of processing` : `canceled after ${queued} s in the queue`;
    return {
      ...about('never ends on its own here (cancel it as the recording did)'),
      queue_seconds: started ? queued : MAX_SECONDS,
      outcome: 'timeout',
      ...(started ? { cancelable_while_processing: true } : {}),
    };
  }
  if (status === 'failed') {
    const code = last.error?.code as NonNullable<Scenario['failure']>['code'];
    const message = typeof last.error?.message === 'string' && last.error.message !== '' && !redactedText(last.error.message) ? last.error.message.slice(0, 1000) : undefined;
    return {
      ...about(`failed with ${code}`),
      queue_seconds: queued,
      ...(started ? { processing_seconds: processing } : {}),
      outcome: 'failed',
      failure: { code, during: started ? 'processing' : 'queued', ...(message !== undefined ? { message } : {}) },
    };
  }
  const output = outputOf(last, task.redacted);
  const settle = settleOf(last);
  return {
    ...about('succeeded'),
    queue_seconds: queued,
    processing_seconds: processing,
    outcome: 'succeeded',
    ...(output ? { output } : {}),
    ...(settle ? { settle } : {}),
  };
}

/** The output's shapes: text (only when kept), duration, usage, and of each file its kind, type and dimensions (never addresses). */
function outputOf(last: TaskBody, redacted: boolean): Scenario['output'] | undefined {
  const recorded = last.output;
  if (!isPlainObject(recorded)) return undefined;
  const output: NonNullable<Scenario['output']> = {};
  if (typeof recorded.text === 'string' && !redacted && recorded.text.length <= 100_000) output.text = recorded.text;
  if (Array.isArray(recorded.files) && recorded.files.length > 0) {
    output.files = recorded.files.slice(0, 16).map((file: unknown) => {
      const record = isPlainObject(file) ? file : {};
      const fields: Record<string, unknown> = {};
      for (const key of ['type', 'mime_type'] as const) if (typeof record[key] === 'string' && record[key] !== '') fields[key] = record[key];
      for (const key of ['width', 'height'] as const) if (record[key] === null || (Number.isInteger(record[key]) && (record[key] as number) >= 1)) fields[key] = record[key];
      if (record['duration'] === null || (typeof record['duration'] === 'number' && record['duration'] >= 0)) fields['duration'] = record['duration'];
      return fields;
    });
  }
  if (typeof recorded.duration === 'number' && recorded.duration >= 0) output.duration = recorded.duration;
  if (isPlainObject(recorded.usage)) output.usage = recorded.usage;
  return Object.keys(output).length > 0 ? output : undefined;
}

/** The usage the charge was settled on: a duration's seconds, a usage's output tokens. */
function settleOf(last: TaskBody): Scenario['settle'] | undefined {
  const duration = last.output?.duration;
  const tokens = isPlainObject(last.output?.usage) ? last.output.usage['output_tokens'] : undefined;
  const settle: NonNullable<Scenario['settle']> = {};
  if (typeof duration === 'number' && duration > 0 && duration <= 86_400) settle.seconds = duration;
  if (Number.isInteger(tokens) && (tokens as number) >= 0 && (tokens as number) <= 1_000_000_000) settle.output_tokens = tokens as number;
  return Object.keys(settle).length > 0 ? settle : undefined;
}

/** The model and every scalar input value the task showed (normalized, as the emulator matches them). */
function matchOf(task: SeenTask, last: TaskBody): ScenarioMatch | undefined {
  const model: unknown = last.model ?? task.model;
  if (typeof model !== 'string') return undefined;
  const input = task.seen.map((s) => s.body.input).find(isPlainObject) ?? {};
  const scalars = Object.fromEntries(
    Object.entries(input).filter((entry): entry is [string, string | number | boolean] => ['string', 'number', 'boolean'].includes(typeof entry[1])),
  );
  return { models: [model], ...(Object.keys(scalars).length > 0 ? { input: scalars } : {}) };
}
