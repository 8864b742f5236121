import { Document } from 'yaml';
import { parseSse } from '../conformance/client.ts';
import type { Scenario, ScenarioMatch, TextBehaviour } from '../scenarios/index.ts';
import { textFormatOf, toPieces } from '../text/index.ts';
import type { HarEntry } from './har.ts';
import type { Recording } from './read.ts';

/**
 * A recording turned into scenarios the emulator replays (`svc-emulator import-recording`): one per recorded task,
 * with the times, ending and output shapes its answers showed, and one per distinct recorded text answer, with its
 * chunks, usage and pacing. Pure: the command reads the recording and writes the files.
 */

/** What gave no scenario, and why: the summary counts the reasons. */
export interface Skipped {
  what: 'task' | 'text call';
  id: string;
  reason: string;
}

/** A scenario as a file gives it: what the schema fills in by default left out. */
export type ScenarioEntry = Pick<Scenario, 'name' | 'outcome'> & Partial<Scenario>;

export interface Imported {
  scenarios: ScenarioEntry[];
  skipped: Skipped[];
  /** How many of the scenarios come from redacted exchanges (a recording made without --keep-content). */
  redacted: number;
}

const FAILURE_CODES = new Set(['invalid_params', 'content_rejected', 'insufficient_points', 'timeout', 'service_unavailable', 'capacity_shortage', 'generation_failed', 'no_result']);
const MAX_SECONDS = 31_536_000;
/** The Scenario schema's limits (openapi/admin.yaml): a description, a recorded answer's chunks and each chunk. */
const MAX_DESCRIPTION = 1000;
const MAX_CHUNKS = 100_000;
const MAX_CHUNK_LENGTH = 100_000;
/** A description within the schema's length, however long the recorded model name or id. */
const described = (text: string): string => (text.length <= MAX_DESCRIPTION ? text : `${text.slice(0, MAX_DESCRIPTION - 1)}…`);

interface TaskBody {
  id: string;
  object: 'task';
  model?: string;
  status?: string;
  created_at?: string | null;
  started_at?: string | null;
  finished_at?: string | null;
  input?: Record<string, unknown>;
  output?: { text?: unknown; files?: unknown; duration?: unknown; usage?: unknown } | null;
  error?: { code?: unknown; message?: unknown } | null;
}

/** A task as the recording saw it: its answers' task objects in time order, and its cancels. */
interface SeenTask {
  id: string;
  model: string | undefined;
  seen: { atMs: number; body: TaskBody }[];
  /** The statuses the task's cancels were answered with. */
  cancels: number[];
  redacted: boolean;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const redactedEntry = (entry: HarEntry): boolean => entry._svcEmulator?.redacted?.includes('content') === true;
/** Text the recorder replaced character by character (`xxx xx`). */
const redactedText = (text: string): boolean => /^[x\s]*x[x\s]*$/.test(text);
const seconds = (fromMs: number, toMs: number): number => Math.min(MAX_SECONDS, Math.max(0, Math.round(toMs - fromMs) / 1000));
const parseJson = (text: string | undefined): unknown => {
  try {
    return text === undefined ? undefined : (JSON.parse(text) as unknown);
  } catch {
    return undefined;
  }
};
/** Epoch milliseconds of a task object's time, or undefined for null or an unreadable one. */
const timeOf = (value: unknown): number | undefined => {
  const ms = typeof value === 'string' ? Date.parse(value) : NaN;
  return Number.isNaN(ms) ? undefined : ms;
};
/** When the answer's first byte came: what a task object in it shows is of that moment. */
const answeredAt = (entry: HarEntry): number =>
  Date.parse(entry.startedDateTime) + Math.max(0, entry.timings.send) + Math.max(0, entry.timings.wait);
/** A name the Scenario schema takes (lower case): `recorded-t251124223431abc123`. */
const scenarioName = (prefix: string, id: string): string => `${prefix}${id.toLowerCase().replace(/[^a-z0-9_.-]/g, '-')}`.slice(0, 64);

/** The scenario import-recording makes of a recorded task (parity names it on the task's replayed submission). */
export const recordedTaskScenario = (taskId: string): string => scenarioName('recorded-', taskId);

/** The scenario import-recording makes of a recorded text call, by its request's fingerprint. */
export const recordedTextScenario = (fingerprint: string): string => scenarioName('recorded-text-', fingerprint.slice('sha256:'.length, 'sha256:'.length + 12));

/** The task objects of an answer: a task (submit, query, cancel) or a list's. */
function taskBodiesOf(entry: HarEntry): TaskBody[] {
  const body = parseJson(entry.response.content.text);
  if (!isObject(body)) return [];
  const items = body['object'] === 'list' && Array.isArray(body['data']) ? (body['data'] as unknown[]) : [body];
  return items.filter((item): item is TaskBody => isObject(item) && item['object'] === 'task' && typeof item['id'] === 'string');
}

/**
 * Every task of the recording (its pages, and the tasks its exchanges name), in the order first seen, with the
 * task objects any answer showed of it (a list's included).
 */
function seenTasks(recording: Recording): SeenTask[] {
  const tasks = new Map<string, SeenTask>();
  const taskOf = (id: string, model?: string): SeenTask => {
    let task = tasks.get(id);
    if (!task) tasks.set(id, (task = { id, model, seen: [], cancels: [], redacted: false }));
    return task;
  };
  for (const page of recording.pages) taskOf(page.id, page._svcEmulator?.model);
  for (const entry of recording.entries) {
    const id = entry._svcEmulator?.task ?? entry.pageref;
    if (id !== undefined) taskOf(id);
  }
  for (const entry of recording.entries) {
    const id = entry._svcEmulator?.task ?? entry.pageref;
    const bodies = taskBodiesOf(entry);
    if (id !== undefined && entry.request.method === 'POST' && /\/v1\/tasks\/[^/?]+\/cancel(\?|$)/.test(entry.request.url)) {
      tasks.get(id)?.cancels.push(entry.response.status);
    }
    for (const task of new Set([...(id === undefined ? [] : [tasks.get(id)]), ...bodies.map((b) => tasks.get(b.id))])) {
      if (task && redactedEntry(entry)) task.redacted = true;
    }
    for (const body of bodies) tasks.get(body.id)?.seen.push({ atMs: answeredAt(entry), body });
  }
  for (const task of tasks.values()) task.seen.sort((a, b) => a.atMs - b.atMs);
  return [...tasks.values()];
}

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
  if (!isObject(recorded)) return undefined;
  const output: NonNullable<Scenario['output']> = {};
  if (typeof recorded.text === 'string' && !redacted && recorded.text.length <= 100_000) output.text = recorded.text;
  if (Array.isArray(recorded.files) && recorded.files.length > 0) {
    output.files = recorded.files.slice(0, 16).map((file: unknown) => {
      const record = isObject(file) ? file : {};
      const fields: Record<string, unknown> = {};
      for (const key of ['type', 'mime_type'] as const) if (typeof record[key] === 'string' && record[key] !== '') fields[key] = record[key];
      for (const key of ['width', 'height'] as const) if (record[key] === null || (Number.isInteger(record[key]) && (record[key] as number) >= 1)) fields[key] = record[key];
      if (record['duration'] === null || (typeof record['duration'] === 'number' && record['duration'] >= 0)) fields['duration'] = record['duration'];
      return fields;
    });
  }
  if (typeof recorded.duration === 'number' && recorded.duration >= 0) output.duration = recorded.duration;
  if (isObject(recorded.usage)) output.usage = recorded.usage;
  return Object.keys(output).length > 0 ? output : undefined;
}

/** The usage the charge was settled on: a duration's seconds, a usage's output tokens. */
function settleOf(last: TaskBody): Scenario['settle'] | undefined {
  const duration = last.output?.duration;
  const tokens = isObject(last.output?.usage) ? last.output.usage['output_tokens'] : undefined;
  const settle: NonNullable<Scenario['settle']> = {};
  if (typeof duration === 'number' && duration > 0 && duration <= 86_400) settle.seconds = duration;
  if (Number.isInteger(tokens) && (tokens as number) >= 0 && (tokens as number) <= 1_000_000_000) settle.output_tokens = tokens as number;
  return Object.keys(settle).length > 0 ? settle : undefined;
}

/** The model and every scalar input value the task showed (normalized, as the emulator matches them). */
function matchOf(task: SeenTask, last: TaskBody): ScenarioMatch | undefined {
  const model: unknown = last.model ?? task.model;
  if (typeof model !== 'string') return undefined;
  const input = task.seen.map((s) => s.body.input).find(isObject) ?? {};
  const scalars = Object.fromEntries(
    Object.entries(input).filter((entry): entry is [string, string | number | boolean] => ['string', 'number', 'boolean'].includes(typeof entry[1])),
  );
  return { models: [model], ...(Object.keys(scalars).length > 0 ? { input: scalars } : {}) };
}

// ---------------------------------------------------------------------------------------------------------------
// Text calls

/** A recorded text answer as the scenario replays it. */
interface Answer {
  chunks: string[];
  finish: 'stop' | 'length';
  inputTokens?: number;
  outputTokens?: number;
  streamed: boolean;
}

/**
 * One scenario per distinct recorded text request (by its fingerprint; a streamed recording of it before another),
 * named `recorded-text-<12 hex digits of the fingerprint>`: `match.text_request`, the answer's content deltas as
 * `chunks` (a non-streamed answer's text cut into words), how it ended, its usage, `first_token_ms` from the wait
 * for the first byte and, for a stream, `chunk_interval_ms` spreading the rest of it over the chunks. Error
 * answers, tool calls and unreadable answers give none. Redacted text (`xxx`) is imported: it replays the
 * recorded chunking and pacing.
 */
export function importTextCalls(recording: Recording): Imported {
  const skipped: Skipped[] = [];
  const chosen = new Map<string, { id: string; entry: HarEntry; answer: Answer }>();
  for (const entry of recording.entries) {
    const format = entry._svcEmulator?.textFormat ?? textFormatOf(new URL(entry.request.url, 'http://recording').pathname)?.name;
    if (format === undefined) continue;
    const id = `${entry.request.method} ${new URL(entry.request.url, 'http://recording').pathname} at ${entry.startedDateTime}`;
    const fingerprint = entry._svcEmulator?.textFingerprint;
    if (fingerprint === undefined) {
      skipped.push({ what: 'text call', id, reason: 'no fingerprint (a request the format could not read)' });
      continue;
    }
    const answer = answerOf(entry, format);
    if (typeof answer === 'string') {
      skipped.push({ what: 'text call', id, reason: answer });
      continue;
    }
    const earlier = chosen.get(fingerprint);
    if (earlier && (earlier.answer.streamed || !answer.streamed)) {
      skipped.push({ what: 'text call', id, reason: 'the same request as an earlier one' });
      continue;
    }
    // A stream shows the real chunking and pacing: it replaces an earlier answer of the request that was not streamed.
    if (earlier) skipped.push({ what: 'text call', id: earlier.id, reason: 'the same request as an earlier one' });
    chosen.set(fingerprint, { id, entry, answer });
  }
  const scenarios = [...chosen].map(([fingerprint, { entry, answer }]) => textScenario(fingerprint, entry, answer));
  const redacted = [...chosen.values()].filter(({ entry, answer }) => redactedEntry(entry) || redactedText(answer.chunks.join(''))).length;
  return { scenarios, skipped, redacted };
}

function textScenario(fingerprint: string, entry: HarEntry, answer: Answer): ScenarioEntry {
  const { wait, receive } = entry.timings;
  const text: Partial<TextBehaviour> = { chunks: answer.chunks };
  if (answer.finish === 'length') text.finish = 'length';
  if (answer.inputTokens !== undefined && answer.inputTokens >= 0 && answer.inputTokens <= 10_000_000) text.input_tokens = answer.inputTokens;
  if (answer.outputTokens !== undefined && answer.outputTokens >= 1 && answer.outputTokens <= 100_000) text.output_tokens = answer.outputTokens;
  text.first_token_ms = Math.min(600_000, Math.max(0, Math.round(wait)));
  if (answer.streamed && answer.chunks.length > 1) text.chunk_interval_ms = Math.min(60_000, Math.max(0, Math.round(receive / (answer.chunks.length - 1))));
  const request = parseJson(entry.request.postData?.text);
  const model = isObject(request) && typeof request['model'] === 'string' ? request['model'] : 'text';
  const how = answer.streamed ? `${answer.chunks.length} chunks streamed` : `${answer.chunks.length} words, not streamed`;
  return {
    name: recordedTextScenario(fingerprint),
    description: described(`Recorded ${model} call ${new URL(entry.request.url, 'http://recording').pathname} at ${entry.startedDateTime}: ${how}.`),
    match: { text_request: fingerprint },
    outcome: 'succeeded',
    text: text as TextBehaviour,
  };
}

/** The answer of a recorded text call, or why it cannot be replayed. */
function answerOf(entry: HarEntry, format: 'chat' | 'responses' | 'messages'): Answer | string {
  if (entry.response.status < 200 || entry.response.status >= 300) return `error answer (HTTP ${entry.response.status})`;
  const text = entry.response.content.text;
  if (entry._svcEmulator?.truncated || text === undefined) return 'answer not in the recording (over the recorder\'s cap)';
  const streamed = /event-stream/i.test(entry.response.content.mimeType);
  const read = streamed ? readStream(format, parseSse(text)) : readBody(format, parseJson(text));
  if (typeof read === 'string') return read;
  // The answer's text as one content delta a chunk, empty deltas dropped.
  const chunks = streamed ? read.chunks.filter((c) => c !== '') : wordsOf(read.chunks.join(''));
  if (chunks.length > MAX_CHUNKS || chunks.some((c) => c.length > MAX_CHUNK_LENGTH)) return `answer too long for a scenario (over ${MAX_CHUNKS} chunks, or a chunk over ${MAX_CHUNK_LENGTH} characters)`;
  return { ...read, chunks, streamed };
}

/** A non-streamed answer's text in the pieces the emulator streams, trailing white space kept on the last. */
function wordsOf(text: string): string[] {
  const pieces = toPieces(text);
  const rest = text.slice(pieces.join('').length);
  if (rest === '') return pieces;
  if (pieces.length === 0) return [rest];
  pieces[pieces.length - 1] += rest;
  return pieces;
}

type Read = Omit<Answer, 'streamed'> | string;

/** What a non-streamed answer says: its text, how it ended, its usage. */
function readBody(format: 'chat' | 'responses' | 'messages', body: unknown): Read {
  if (!isObject(body)) return 'unreadable answer (not JSON)';
  const usage = isObject(body['usage']) ? body['usage'] : {};
  const tokens = (name: string): number | undefined => (Number.isInteger(usage[name]) ? (usage[name] as number) : undefined);
  if (format === 'chat') {
    const choice = Array.isArray(body['choices']) && isObject(body['choices'][0]) ? body['choices'][0] : {};
    const message = isObject(choice['message']) ? choice['message'] : {};
    if (Array.isArray(message['tool_calls']) && message['tool_calls'].length > 0) return 'tool call';
    if (typeof message['content'] !== 'string') return 'unreadable answer (no message content)';
    return withUsage([message['content']], choice['finish_reason'] === 'length', tokens('prompt_tokens'), tokens('completion_tokens'));
  }
  if (format === 'responses') {
    const items = Array.isArray(body['output']) ? body['output'].filter(isObject) : [];
    if (items.some((item) => item['type'] === 'function_call')) return 'tool call';
    if (body['status'] === 'failed' || isObject(body['error'])) return 'error answer (response failed)';
    const texts = items.flatMap((item) => (Array.isArray(item['content']) ? item['content'].filter(isObject) : []))
      .filter((part) => part['type'] === 'output_text' && typeof part['text'] === 'string')
      .map((part) => part['text'] as string);
    return withUsage(texts, body['status'] === 'incomplete', tokens('input_tokens'), tokens('output_tokens'));
  }
  const blocks = Array.isArray(body['content']) ? body['content'].filter(isObject) : [];
  if (blocks.some((block) => block['type'] === 'tool_use')) return 'tool call';
  const texts = blocks.filter((block) => block['type'] === 'text' && typeof block['text'] === 'string').map((block) => block['text'] as string);
  return withUsage(texts, body['stop_reason'] === 'max_tokens', tokens('input_tokens'), tokens('output_tokens'));
}

const withUsage = (chunks: string[], length: boolean, inputTokens: number | undefined, outputTokens: number | undefined): Omit<Answer, 'streamed'> => ({
  chunks,
  finish: length ? 'length' : 'stop',
  ...(inputTokens !== undefined ? { inputTokens } : {}),
  ...(outputTokens !== undefined ? { outputTokens } : {}),
});

/** What a stream says: its content deltas in order, how it ended, its usage; an error event or a tool call ends the reading. */
function readStream(format: 'chat' | 'responses' | 'messages', events: { event: string | null; data: string }[]): Read {
  const chunks: string[] = [];
  let length = false;
  let inputTokens: number | undefined;
  let outputTokens: number | undefined;
  const int = (value: unknown): number | undefined => (Number.isInteger(value) ? (value as number) : undefined);
  for (const { event, data } of events) {
    if (data === '[DONE]') continue;
    const json = parseJson(data);
    if (!isObject(json)) return 'unreadable answer (an event that is not JSON)';
    const type = typeof json['type'] === 'string' ? json['type'] : event;
    if (event === 'error' || type === 'error' || type === 'response.failed' || (format === 'chat' && isObject(json['error']))) return 'error mid-stream';
    if (format === 'chat') {
      const choice = Array.isArray(json['choices']) && isObject(json['choices'][0]) ? json['choices'][0] : {};
      const delta = isObject(choice['delta']) ? choice['delta'] : {};
      if (Array.isArray(delta['tool_calls'])) return 'tool call';
      if (typeof delta['content'] === 'string') chunks.push(delta['content']);
      if (choice['finish_reason'] === 'length') length = true;
      if (isObject(json['usage'])) {
        inputTokens = int(json['usage']['prompt_tokens']) ?? inputTokens;
        outputTokens = int(json['usage']['completion_tokens']) ?? outputTokens;
      }
    } else if (format === 'responses') {
      if (type === 'response.output_text.delta' && typeof json['delta'] === 'string') chunks.push(json['delta']);
      if (type === 'response.function_call_arguments.delta' || (isObject(json['item']) && json['item']['type'] === 'function_call')) return 'tool call';
      if ((type === 'response.completed' || type === 'response.incomplete') && isObject(json['response'])) {
        length = type === 'response.incomplete';
        const usage = isObject(json['response']['usage']) ? json['response']['usage'] : {};
        inputTokens = int(usage['input_tokens']);
        outputTokens = int(usage['output_tokens']);
      }
    } else {
      if (type === 'content_block_start' && isObject(json['content_block']) && json['content_block']['type'] === 'tool_use') return 'tool call';
      const delta = isObject(json['delta']) ? json['delta'] : {};
      if (type === 'content_block_delta' && delta['type'] === 'text_delta' && typeof delta['text'] === 'string') chunks.push(delta['text']);
      if (type === 'message_start' && isObject(json['message']) && isObject(json['message']['usage'])) inputTokens = int(json['message']['usage']['input_tokens']);
      if (type === 'message_delta') {
        length = delta['stop_reason'] === 'max_tokens';
        if (isObject(json['usage'])) outputTokens = int(json['usage']['output_tokens']) ?? outputTokens;
      }
    }
  }
  return withUsage(chunks, length, inputTokens, outputTokens);
}

// ---------------------------------------------------------------------------------------------------------------
// Files

/** A scenario file's text: a comment at the top, then the scenarios (YAML, as `scenarios/*.yaml`). */
export function scenarioFileText(comment: string, scenarios: ScenarioEntry[]): string {
  const document = new Document({ scenarios }, { aliasDuplicateObjects: false });
  document.commentBefore = comment
    .split('\n')
    .map((line) => (line === '' ? '' : ` ${line}`))
    .join('\n');
  // Chunks with line breaks or edge spaces stay one quoted line each, as they were on the wire.
  return document.toString({ lineWidth: 0, blockQuote: false });
}
