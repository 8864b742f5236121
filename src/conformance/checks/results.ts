import type { Exchange } from '../../wire/index.ts';
import type { Check, CheckContext } from '../types.ts';
import { download } from './files.ts';
import { runToSuccess } from './to-success.ts';
import type { Ended } from './to-success.ts';
import { mediaType } from './uploads.ts';

/** A file record (an item of output.files), read defensively. @see reference "File record" */
interface FileRecord {
  url?: unknown;
  type?: unknown;
  mime_type?: unknown;
  size?: unknown;
  width?: unknown;
  height?: unknown;
  duration?: unknown;
  cover_url?: unknown;
  expires_at?: unknown;
}

const BEIJING = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?\+08:00$/;
const isAddress = (value: unknown): value is string => typeof value === 'string' && /^https?:\/\/[^/]/.test(value);
const isPixels = (value: unknown): value is number => typeof value === 'number' && Number.isInteger(value) && value >= 1;

/** What the check knows the video must be: its requested length, resolution and ratio (video-gen-2.0-fast). */
interface Requested {
  duration?: number;
  resolution?: number;
  ratio?: [number, number];
}

/**
 * The video records of a succeeded task as the reference lists them ("Result: output.files has video records (type
 * `video`, mime_type, width, height, duration in seconds, cover_url, expires_at)"), each downloadable: the address
 * gives `size` bytes of `mime_type`, and the cover an image.
 * @see reference "File record", "Model: video-gen-2.0-fast" and "Model: avatar-photo" Result
 */
async function expectVideoRecords(ctx: CheckContext, { task, last }: Ended, requested: Requested): Promise<void> {
  const output = task.output as { files?: unknown; duration?: unknown } | null;
  const files = (Array.isArray(output?.files) ? output.files : []) as FileRecord[];
  ctx.expect(files.length > 0, 'output.files holds the video', last, 'a video record', output?.files);
  for (const [i, record] of files.entries()) {
    const at = `output.files[${i}]`;
    ctx.expect(record.type === 'video', `${at}.type is video`, last, 'video', record.type);
    ctx.expect(typeof record.mime_type === 'string' && record.mime_type.startsWith('video/'), `${at}.mime_type is a video type`, last, 'video/…', record.mime_type);
    ctx.expect(isAddress(record.url), `${at}.url is an address`, last, 'http(s)://…', record.url);
    ctx.expect(typeof record.size === 'number' && Number.isInteger(record.size) && record.size > 0, `${at}.size is its bytes`, last, 'a whole number of bytes', record.size);
    ctx.expect(isPixels(record.width) && isPixels(record.height), `${at}.width and height are pixels`, last, 'whole numbers ≥ 1', { width: record.width, height: record.height });
    ctx.expect(typeof record.duration === 'number' && record.duration > 0, `${at}.duration is seconds`, last, 'seconds', record.duration);
    ctx.expect(isAddress(record.cover_url) && record.cover_url !== record.url, `${at}.cover_url is the cover's own address`, last, 'http(s)://… (not the video)', record.cover_url);
    const expires = typeof record.expires_at === 'string' && BEIJING.test(record.expires_at) ? Date.parse(record.expires_at) : Number.NaN;
    ctx.expect(expires > Date.parse(task.finished_at ?? ''), `${at}.expires_at is a time after finished_at`, last, `after ${String(task.finished_at)}`, record.expires_at);
    if (typeof output?.duration === 'number') ctx.expect(record.duration === output.duration, `${at}.duration is output.duration (the actual seconds)`, last, output.duration, record.duration);
    expectRequested(ctx, last, record, requested, at);
    await expectDownloads(ctx, record, at);
  }
}

/** The video is what was asked for: as long (within half a second), its short side the resolution, of the ratio. */
function expectRequested(ctx: CheckContext, last: Exchange, record: FileRecord, requested: Requested, at: string): void {
  const [width, height, duration] = [Number(record.width), Number(record.height), Number(record.duration)];
  if (requested.duration !== undefined) ctx.expect(Math.abs(duration - requested.duration) <= 0.5, `${at}.duration is the ${requested.duration} s asked for`, last, requested.duration, record.duration);
  if (requested.resolution !== undefined) ctx.expect(Math.min(width, height) === requested.resolution, `${at}'s short side is the ${requested.resolution}p asked for`, last, requested.resolution, { width, height });
  if (requested.ratio) {
    const [w, h] = requested.ratio;
    ctx.expect(Math.abs(width / height / (w / h) - 1) < 0.01, `${at} is ${w}:${h}, as asked`, last, `${w}:${h}`, { width, height });
  }
}

/** The record's address gives `size` bytes served as `mime_type`; its cover's address gives an image. */
async function expectDownloads(ctx: CheckContext, record: FileRecord, at: string): Promise<void> {
  const video = await download(ctx, String(record.url));
  ctx.expect(video.exchange.status === 200, `${at}.url answers 200`, video.exchange, 200, video.exchange.status);
  ctx.expect(video.bytes.length === record.size, `${at}.url gives the ${String(record.size)} bytes its size states`, video.exchange, record.size, video.bytes.length);
  const served = mediaType(video.exchange.headers.get('content-type'));
  ctx.expect(served === record.mime_type, `${at}.url is served as its mime_type`, video.exchange, record.mime_type, served);
  const cover = await download(ctx, String(record.cover_url));
  ctx.expect(cover.exchange.status === 200, `${at}.cover_url answers 200`, cover.exchange, 200, cover.exchange.status);
  const coverType = mediaType(cover.exchange.headers.get('content-type'));
  ctx.expect(coverType.startsWith('image/') && cover.bytes.length > 0, `${at}.cover_url gives an image`, cover.exchange, 'image/…', `${coverType}, ${cover.bytes.length} bytes`);
}

export const resultChecks: Check[] = [
  {
    id: 'files.result.video-record',
    group: 'files',
    title: 'a succeeded video has a video file record (mime_type, size, width, height, duration, cover_url, expires_at) of the length, resolution and ratio asked, downloadable with the size stated',
    cost: 388.8,
    needs: ['admin'],
    async run(ctx) {
      const [ended] = await runToSuccess(ctx, [{ model: 'video-gen-2.0-fast', input: { prompt: 'conformance: a paper boat, portrait', resolution: '480p', ratio: '9:16', duration: 4 } }]);
      if (ended) await expectVideoRecords(ctx, ended, { duration: 4, resolution: 480, ratio: [9, 16] });
    },
  },
  {
    id: 'files.result.avatar-record',
    group: 'files',
    title: 'a succeeded avatar video has a video file record (mime_type, size, width, height, duration as output.duration, cover_url, expires_at), downloadable with the size stated',
    cost: 40,
    needs: ['admin'],
    async run(ctx) {
      const payload = { model: 'avatar-photo', input: { image: 'https://cdn.example.com/conformance/portrait.jpg', audio: 'https://cdn.example.com/conformance/speech.mp3', quality: 'fast' } };
      const [ended] = await runToSuccess(ctx, [payload]);
      if (ended) await expectVideoRecords(ctx, ended, {});
    },
  },
];
