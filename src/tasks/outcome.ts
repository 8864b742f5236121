import Big from 'big.js';
import { chargeFor, tokensPerSecond } from '../points/index.ts';
import type { ActualUsage, Points } from '../points/index.ts';
import { formatTime } from '../clock/index.ts';
import type { TaskModelSpec } from '../contract/index.ts';
import { addFile, fileOf, fileUrl } from '../files/index.ts';
import type { Random } from '../random/index.ts';
import { avatarVideoSize, notesText, renderMedia, videoSize } from '../results/index.ts';
import type { GeneratedMedia } from '../results/index.ts';
import type { FilesRepo, StoredFile } from '../files/index.ts';
import type { StoredTask } from './records.ts';
import type { FileRecord, TaskOutput } from './task.ts';

export interface OutcomeContext {
  db: { files: FilesRepo };
  random: Random;
  publicUrl: string;
  fileRetentionMs: number;
  /** Called for every result file stored, so its expiry can be scheduled. */
  onFile: (expiresMs: number) => void;
}

/** Seconds assumed for a reference video whose length the emulator does not know (an https address). */
const UNKNOWN_VIDEO_SECONDS = 5;
/** The shape of a result file a scenario adds past the generated ones, before its own fields are applied. */
const EXTRA_VIDEO = { width: 320, height: 180, duration: 2 } as const;

/**
 * The output and the charge of a task that succeeds now: generated results (text, or video files stored on the
 * emulator's own file storage), overridden by the scenario's `output`, and the charge from actual usage.
 * @see reference "output object", "File record" and each model's Result and Price
 */
export function succeed(
  ctx: OutcomeContext,
  stored: StoredTask,
  model: TaskModelSpec,
  nowMs: number,
  override: TaskOutput | Partial<TaskOutput> | null = null,
): { output: TaskOutput; charge: Points } {
  const { task, plan } = stored;
  const input = task.input;
  const actual = actualUsage(ctx, stored, model);
  const overrideOutput = { ...plan.output, ...override };
  let output: TaskOutput;
  if (model.output === 'text') {
    output = { files: [], text: notesText(task.id, input, formatTime(nowMs)) };
  } else {
    // The actual seconds (an avatar video is as long as its audio, 7.2 s say); only the charge rounds them up.
    const seconds = model.id === 'avatar-photo' ? (actual.seconds ?? 0) : Number(input['duration']);
    const photo = model.id === 'avatar-photo' ? fileOf(ctx.db, input['image'], ctx.publicUrl) : undefined;
    const size = model.id === 'avatar-photo' ? avatarVideoSize(photo) : videoSize(input['ratio'], input['resolution']);
    output = { files: [videoRecord(ctx, stored, nowMs, 0, { ...size, duration: seconds })], duration: seconds };
    if (actual.output_tokens !== undefined) output.usage = { output_tokens: actual.output_tokens };
  }
  if (overrideOutput.text !== undefined) output.text = overrideOutput.text;
  if (overrideOutput.duration !== undefined) output.duration = overrideOutput.duration;
  if (overrideOutput.usage !== undefined) output.usage = overrideOutput.usage;
  // Overrides are checked against the file record's fields (admin.yaml FileRecordOverride); a position past the
  // generated files starts from a real stored result file, so every record is complete and its address served.
  overrideOutput.files?.forEach((fields, i) => {
    const base = output.files[i] ?? videoRecord(ctx, stored, nowMs, i, EXTRA_VIDEO);
    output.files[i] = { ...withoutInapplicable(base, fields.type ?? base.type), ...fields };
  });
  return { output, charge: chargeFor(model.pricing, input, actual) };
}

/** The fields of a file record that apply to each type; the others are null for it (a `file` has none of them). */
const MEDIA_FIELDS = ['width', 'height', 'duration', 'cover_url'] as const;
const APPLIES_TO: Record<string, readonly (typeof MEDIA_FIELDS)[number][]> = {
  video: MEDIA_FIELDS,
  image: ['width', 'height'],
  audio: ['duration'],
};

/**
 * A record made a scenario's type (an `audio` over a generated video, say) with the fields that do not apply to
 * that type null; the scenario's own fields still win over this.
 * @see reference "File record": fields that do not apply are null
 */
function withoutInapplicable(record: FileRecord, type: string): FileRecord {
  const applies = new Set<string>(Object.hasOwn(APPLIES_TO, type) ? APPLIES_TO[type] : []);
  const nulls = Object.fromEntries(MEDIA_FIELDS.filter((field) => !applies.has(field)).map((field) => [field, null]));
  return { ...record, ...nulls };
}

/**
 * What the task actually used: from the scenario's `settle`, else from its files and input. Avatar seconds are
 * the actual (unrounded) duration: reported as is in `output.duration`, rounded up only by the charge.
 */
function actualUsage(ctx: OutcomeContext, stored: StoredTask, model: TaskModelSpec): ActualUsage {
  const { input } = stored.task;
  const settle = stored.plan.settle ?? {};
  if (model.id === 'avatar-photo') {
    if (settle.seconds !== undefined) return { seconds: settle.seconds };
    if (input['drive'] === 'text') return { seconds: Math.max(2, Math.ceil(String(input['content'] ?? '').length / 5)) };
    return { seconds: fileOf(ctx.db, input['audio'], ctx.publicUrl)?.duration ?? 10 };
  }
  const videos = input['videos'];
  if (model.pricing.rule === 'per_second' && model.pricing.settle_on_tokens_when_present && Array.isArray(videos) && videos.length > 0) {
    if (settle.output_tokens !== undefined) return { output_tokens: settle.output_tokens };
    // Reference videos count: each of their seconds at a tenth of an output second.
    const referenceSeconds = videos.reduce<number>(
      (sum, address) => sum + (fileOf(ctx.db, address, ctx.publicUrl)?.duration ?? UNKNOWN_VIDEO_SECONDS),
      0,
    );
    const seconds = new Big(Number(input['duration'])).plus(new Big(referenceSeconds).div(10));
    return { output_tokens: Number(seconds.times(tokensPerSecond(model.pricing, input)).round(0).toString()) };
  }
  return {};
}

/**
 * A result video and its cover, stored under unguessable names. Their bytes are generated to the record's size and
 * duration (a still grey picture) and carry the AIGC label, whose ProduceID is `{task id}/{position}/video` or
 * `…/cover`; the record keeps how to make them, so they are the same bytes after a restart or a state import.
 * @see reference "File record"; "Overview": AI-generated-content marks on result files
 */
function videoRecord(
  ctx: OutcomeContext,
  stored: StoredTask,
  nowMs: number,
  position: number,
  shape: { width: number; height: number; duration: number },
): FileRecord {
  const add = (media: GeneratedMedia, filename: string, mimeType: string): StoredFile => {
    const bytes = renderMedia(media);
    if (!bytes) throw new Error(`cannot render a ${media.width}x${media.height} ${media.media}`);
    const file = addFile(ctx.db, ctx.random, nowMs, ctx.fileRetentionMs, {
      accountId: stored.account_id,
      filename,
      mimeType,
      size: bytes.length,
      duration: media.duration,
      width: media.width,
      height: media.height,
      source: { kind: 'fixture', fixture: media },
    });
    ctx.onFile(file.expires_ms);
    return file;
  };
  const { width, height, duration } = shape;
  const produceId = (media: GeneratedMedia['media']): string => `${stored.task.id}/${position}/${media}`;
  const video = add({ media: 'video', width, height, duration, produce_id: produceId('video') }, 'video.mp4', 'video/mp4');
  const cover = add({ media: 'cover', width, height, duration: null, produce_id: produceId('cover') }, 'cover.jpg', 'image/jpeg');
  return {
    url: fileUrl(ctx.publicUrl, video),
    type: 'video',
    mime_type: video.mime_type,
    size: video.size,
    width,
    height,
    duration,
    cover_url: fileUrl(ctx.publicUrl, cover),
    expires_at: formatTime(video.expires_ms),
  };
}
