import { MAX_LONG_SIDE, MAX_SHORT_SIDE } from './media/index.ts';

interface Size {
  width: number;
  height: number;
}

/**
 * Width and height of a generated video: the short side is the resolution, the long side follows the ratio
 * (rounded to an even number, as encoders want). `adaptive` is taken as 16:9.
 * @see reference "Model: video-gen-2.0-fast": ratio, resolution
 */
export function videoSize(ratio: unknown, resolution: unknown): Size {
  const short = Number(String(resolution ?? '720p').replace('p', '')) || 720;
  const [w, h] = ratio === 'adaptive' || typeof ratio !== 'string' ? [16, 9] : ratio.split(':').map(Number);
  const a = w ?? 16;
  const b = h ?? 9;
  const long = Math.round((short * Math.max(a, b)) / Math.min(a, b) / 2) * 2;
  return a >= b ? { width: long, height: short } : { width: short, height: long };
}

/** An avatar video without a photo of known size (an https address, or an upload that declared none). */
const AVATAR_DEFAULT = { width: 720, height: 1280 } as const;

/**
 * Width and height of an avatar-photo video: the photo's, made even (4:2:0 video has no odd sizes) and, for a
 * photo larger than 4096×2304 either way round, scaled down to fit, keeping its ratio.
 * @see reference "Model: avatar-photo": image (person photo)
 */
export function avatarVideoSize(photo: { width: number | null; height: number | null } | undefined): Size {
  if (!photo?.width || !photo.height) return { ...AVATAR_DEFAULT };
  const { width, height } = photo;
  const scale = Math.min(1, MAX_LONG_SIDE / Math.max(width, height), MAX_SHORT_SIDE / Math.min(width, height));
  const even = (side: number): number => Math.max(2, Math.floor((side * scale + 1e-9) / 2) * 2);
  return { width: even(width), height: even(height) };
}
