import { formatTime } from '../clock/index.ts';
import { createContract, resolvePointer } from '../contract/index.ts';
import type { Task, TaskOutput } from '../contract/index.ts';
import { chargeFor, freezeAmount, sub, toPoints } from '../points/index.ts';
import { ids } from '../random/index.ts';
import type { Random } from '../random/index.ts';

// The callbacks the battery sends, built from the contract: each task's input is normalized by the model's own
// schema (defaults filled in, as the service shows it), its points come from the model's x-pricing, the limits of
// the message at the limits are read from the schemas, and every envelope is checked against its event schema
// (TaskSucceededEvent, ...) before it is sent. A message that the contract refuses is a bug here, never sent.

export type EventType = 'task.succeeded' | 'task.failed' | 'task.canceled' | 'webhook.test';

const EVENT_SCHEMAS: Record<EventType, string> = {
  'task.succeeded': 'TaskSucceededEvent',
  'task.failed': 'TaskFailedEvent',
  'task.canceled': 'TaskCanceledEvent',
  'webhook.test': 'WebhookTestEvent',
};

export interface Message {
  type: EventType;
  /** The task it is about (null for webhook.test). */
  taskId: string | null;
  /** What it is, for a report: `task.succeeded of video-gen-2.0-fast`. */
  label: string;
  /** The body as the service sends it: compact JSON. */
  body: string;
  /** The same envelope, for variants (another serialization). */
  envelope: { type: EventType; timestamp: string; data: unknown };
}

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;

/** An envelope, checked against its event schema, as the message that carries it. */
function message(type: EventType, data: Task | { message: string; account_webhook: boolean }, atMs: number, label: string): Message {
  const envelope = { type, timestamp: formatTime(atMs), data };
  createContract().body('service', EVENT_SCHEMAS[type], envelope);
  return { type, taskId: 'id' in data ? data.id : null, label, body: JSON.stringify(envelope), envelope };
}

interface TaskPlan {
  model: string;
  input: Record<string, unknown>;
  status: Task['status'];
  /** Milliseconds before the end: when it was submitted, and when it started (null: never started). */
  queuedMs: number;
  ranMs: number | null;
  output?: TaskOutput;
  /** Actual seconds of the result, for a price by duration. */
  seconds?: number;
  error?: Task['error'];
  metadata?: Record<string, string>;
}

/** A task as GET would show it when it ended at `endMs`: the input normalized, the points as its price rule says. */
function taskOf(random: Random, endMs: number, plan: TaskPlan): Task {
  const submission = createContract().submission({ model: plan.model, input: plan.input, metadata: plan.metadata ?? {} });
  const frozen = freezeAmount(submission.model.pricing, submission.input);
  const charged = plan.status === 'succeeded' ? chargeFor(submission.model.pricing, submission.input, plan.seconds === undefined ? {} : { seconds: plan.seconds }) : toPoints(0);
  const createdMs = endMs - plan.queuedMs;
  return {
    id: ids.taskId(random, createdMs),
    object: 'task',
    model: plan.model,
    status: plan.status,
    created_at: formatTime(createdMs),
    started_at: plan.ranMs === null ? null : formatTime(endMs - plan.ranMs),
    finished_at: formatTime(endMs),
    input: submission.input,
    points: { frozen, charged, refunded: sub(frozen, charged) },
    output: plan.output ?? null,
    error: plan.error ?? null,
    metadata: submission.metadata,
  };
}

const fileUrl = (random: Random, ext: string): string => `https://files.example.com/r/${ids.fileName(random)}.${ext}`;

function videoFile(random: Random, endMs: number, width: number, height: number, seconds: number, size: number): TaskOutput['files'][number] {
  return {
    url: fileUrl(random, 'mp4'),
    type: 'video',
    mime_type: 'video/mp4',
    size,
    width,
    height,
    duration: seconds,
    cover_url: fileUrl(random, 'jpg'),
    expires_at: formatTime(endMs + 7 * DAY),
  };
}

/** What a note looks like as social-notes-data's output.text (JSON as text, with the platform's own language). */
const noteText = (noteId: string, publishedMs: number): string =>
  JSON.stringify({
    note_id: noteId,
    title: '周末去哪儿：城郊徒步路线合集',
    desc: '三条适合新手的路线，附交通和补给点 🥾',
    type: 'image',
    author: { user_id: '5f3c1a9b0000000001004e2a', nickname: '山野小记' },
    liked_count: 18342,
    collected_count: 9120,
    comment_count: 412,
    share_count: 233,
    tags: ['徒步', '周末去哪儿'],
    published_at: formatTime(publishedMs),
  });

/**
 * One valid callback of each kind the service sends: `task.succeeded` for each of the three models with a
 * believable output, `task.failed`, `task.canceled`, and `webhook.test`. Each task ended a little before `nowMs`.
 * @see reference "Events" → Task callbacks; "Model: ..." Result
 */
export function everyKind(random: Random, nowMs: number): Message[] {
  const end = nowMs - 2_000;
  const note = ids.fileName(random).slice(0, 24).toLowerCase();
  return [
    message('webhook.test', { message: 'This is a test event from svc-emulator receiver-check.', account_webhook: true }, nowMs, 'webhook.test'),
    noteSucceeded(random, end, note),
    message(
      'task.succeeded',
      taskOf(random, end, {
        model: 'video-gen-2.0-fast',
        input: { prompt: 'A paper boat drifting down a rainy street at dusk, close-up, cinematic light', duration: 5, resolution: '720p' },
        status: 'succeeded',
        queuedMs: 3 * MINUTE,
        ranMs: 2 * MINUTE + 40_000,
        output: { files: [videoFile(random, end, 1280, 720, 5, 4_318_207)], duration: 5 },
        metadata: { order_id: `ord_${ids.fileName(random).slice(0, 12)}` },
      }),
      end,
      'task.succeeded of video-gen-2.0-fast',
    ),
    message(
      'task.succeeded',
      taskOf(random, end, {
        model: 'avatar-photo',
        input: { image: fileUrl(random, 'png'), audio: fileUrl(random, 'mp3'), prompt: 'a warm smile, a small nod at the end' },
        status: 'succeeded',
        queuedMs: 90_000,
        ranMs: 75_000,
        seconds: 8.4,
        output: { files: [videoFile(random, end, 720, 1280, 8.4, 2_907_551)], duration: 8.4 },
      }),
      end,
      'task.succeeded of avatar-photo',
    ),
    message(
      'task.failed',
      taskOf(random, end, {
        model: 'social-notes-data',
        input: { mode: 'search', keyword: '城郊徒步 路线', agree: true },
        status: 'failed',
        queuedMs: 12_000,
        ranMs: 9_000,
        error: { code: 'no_result', message: 'Nothing was found for the keyword.' },
      }),
      end,
      'task.failed of social-notes-data',
    ),
    message(
      'task.canceled',
      taskOf(random, end, {
        model: 'video-gen-2.0-fast',
        input: { prompt: 'Timelapse of clouds over a mountain lake', duration: 10, resolution: '1080p', ratio: '9:16' },
        status: 'canceled',
        queuedMs: 40_000,
        ranMs: null,
        error: { code: 'canceled', message: 'The task was canceled.' },
      }),
      end,
      'task.canceled of video-gen-2.0-fast',
    ),
  ];
}

/** A succeeded social-notes-data task's callback (the battery's message for retries, rotation, slow bodies). */
export function noteSucceeded(random: Random, endMs: number, note = ids.fileName(random).slice(0, 24).toLowerCase(), label = 'task.succeeded of social-notes-data'): Message {
  return message(
    'task.succeeded',
    taskOf(random, endMs, {
      model: 'social-notes-data',
      input: { mode: 'note', note: `https://notes.example.com/explore/${note}`, agree: true },
      status: 'succeeded',
      queuedMs: 20_000,
      ranMs: 17_000,
      output: { files: [], text: noteText(note, endMs - 3 * DAY) },
      metadata: { order_id: `ord_${ids.fileName(random).slice(0, 12)}` },
    }),
    endMs,
    label,
  );
}

/** The limits the contract sets on what a callback's task carries. */
function documentedLimits(): { metadataKeys: number; keyLength: number; valueLength: number; noteLength: number } {
  const doc = createContract().documents.service;
  const metadata = resolvePointer(doc, '#/components/schemas/Metadata') as {
    maxProperties: number;
    propertyNames: { maxLength: number };
    additionalProperties: { maxLength: number };
  };
  const note = resolvePointer(doc, '#/components/schemas/SocialNotesDataInput/properties/note') as { maxLength: number };
  return { metadataKeys: metadata.maxProperties, keyLength: metadata.propertyNames.maxLength, valueLength: metadata.additionalProperties.maxLength, noteLength: note.maxLength };
}

/** `length` characters of `alphabet`, repeated (CJK counts one character each, three bytes in UTF-8). */
const filled = (prefix: string, alphabet: string, length: number): string => (prefix + alphabet.repeat(Math.ceil(length / alphabet.length))).slice(0, length);

/**
 * A succeeded task with every field the contract bounds at its bound: the most metadata keys, each key and value
 * as long as allowed (values in CJK, so a limit counted in bytes would be exceeded), the note link at its longest,
 * and the output's optional fields present as null.
 * @see reference "Limits": metadata at most 16 keys; key 1 to 64 characters; value up to 512 characters
 */
export function atLimits(random: Random, endMs: number): Message {
  const limits = documentedLimits();
  const metadata = Object.fromEntries(
    Array.from({ length: limits.metadataKeys }, (_, i) => [filled(`k${String(i + 1).padStart(2, '0')}_`, 'abcdefghij', limits.keyLength), filled(`${i + 1}:`, '城郊徒步路线合集', limits.valueLength)]),
  );
  const link = 'https://notes.example.com/explore/';
  const note = filled(link, '0123456789abcdef', limits.noteLength);
  const noteId = note.slice(link.length, link.length + 24);
  return message(
    'task.succeeded',
    taskOf(random, endMs, {
      model: 'social-notes-data',
      input: { mode: 'note', note, agree: true },
      status: 'succeeded',
      queuedMs: 20_000,
      ranMs: 17_000,
      output: { files: [], text: noteText(noteId, endMs - DAY), voice_id: null, duration: null, usage: null },
      metadata,
    }),
    endMs,
    `${limits.metadataKeys} metadata keys of ${limits.keyLength} characters with values of ${limits.valueLength}, a note link of ${limits.noteLength}, null fields present`,
  );
}
