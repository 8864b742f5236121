/**
 * Width and height of a generated video: the short side is the resolution, the long side follows the ratio
 * (rounded to an even number, as encoders want). `adaptive` is taken as 16:9.
 * @see reference "Model: video-gen-2.0-fast": ratio, resolution
 */
export function videoSize(ratio: unknown, resolution: unknown): { width: number; height: number } {
  const short = Number(String(resolution ?? '720p').replace('p', '')) || 720;
  const [w, h] = ratio === 'adaptive' || typeof ratio !== 'string' ? [16, 9] : ratio.split(':').map(Number);
  const a = w ?? 16;
  const b = h ?? 9;
  const long = Math.round((short * Math.max(a, b)) / Math.min(a, b) / 2) * 2;
  return a >= b ? { width: long, height: short } : { width: short, height: long };
}
