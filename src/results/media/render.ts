import { aigcJson, aigcLabel, aigcXmpApp1, AIGC_KEY } from './aigc.ts';
import type { AvcStream } from './h264.ts';
import { avcStream } from './h264.ts';
import { greyJpeg } from './jpeg.ts';
import { stillVideoMp4 } from './mp4.ts';

/**
 * What a generated result file is: enough to make the same bytes again, so a file record stores this instead of
 * the bytes and serves them after a restart or a state import. Snake case, as it is stored JSON.
 */
export interface GeneratedMedia {
  media: 'video' | 'cover';
  width: number;
  height: number;
  /** Seconds of video (kept to the millisecond); null for a cover. */
  duration: number | null;
  /** The AIGC label's ProduceID. */
  produce_id: string;
}

/** The largest picture rendered: 4096×2304 either way round (H.264 level 5.1's largest frame). */
export const MAX_LONG_SIDE = 4096;
export const MAX_SHORT_SIDE = 2304;
const MAX_SECONDS = 86400;

/**
 * The bytes of a generated result file, or undefined for a description the emulator would not have made (an
 * imported state may carry anything). Deterministic: the same description always gives the same bytes.
 */
export function renderMedia(media: GeneratedMedia): Buffer | undefined {
  if (!renderable(media)) return undefined;
  const key = JSON.stringify([media.media, media.width, media.height, media.duration, media.produce_id]);
  let bytes = files.get(key);
  if (!bytes) {
    const label = aigcLabel(media.produce_id);
    bytes =
      media.media === 'cover'
        ? greyJpeg(media.width, media.height, [aigcXmpApp1(label)])
        : stillVideoMp4(streamOf(media.width, media.height), {
            width: media.width,
            height: media.height,
            durationMs: Math.max(1, Math.round((media.duration ?? 0) * 1000)),
            metadata: { [AIGC_KEY]: aigcJson(label) },
          });
  }
  files.set(key, bytes);
  return bytes;
}

function renderable(media: GeneratedMedia): boolean {
  if (typeof media !== 'object' || media === null) return false;
  const { width, height } = media;
  const even = (side: unknown): boolean => Number.isInteger(side) && (side as number) >= 2 && (side as number) % 2 === 0;
  if (!even(width) || !even(height)) return false;
  if (Math.max(width, height) > MAX_LONG_SIDE || Math.min(width, height) > MAX_SHORT_SIDE) return false;
  if (typeof media.produce_id !== 'string') return false;
  if (media.media === 'cover') return true;
  return media.media === 'video' && typeof media.duration === 'number' && media.duration >= 0 && media.duration <= MAX_SECONDS;
}

/**
 * Small least-recently-used caches: a task's files are made when its record is written and fetched soon after;
 * the encoded picture is shared by every video of one size. Bounded, so memory stays flat however many tasks run.
 */
class Lru<V> {
  private readonly entries = new Map<string, V>();
  constructor(private readonly capacity: number) {}

  get(key: string): V | undefined {
    return this.entries.get(key);
  }

  set(key: string, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value as string);
  }
}

const files = new Lru<Buffer>(32);
const streams = new Lru<AvcStream>(8);

function streamOf(width: number, height: number): AvcStream {
  const key = `${width}x${height}`;
  const stream = streams.get(key) ?? avcStream(width, height);
  streams.set(key, stream);
  return stream;
}
