import { readFileSync } from 'node:fs';

/** The media served as result files (see fixtures/media/README.md for how they were made). */
export type MediaFixture = 'sample.mp4' | 'cover.jpg';

/** What `sample.mp4` is (fixtures/media/README.md): a result file with no size of its own to follow takes this. */
export const SAMPLE_VIDEO = { width: 320, height: 180, duration: 2 } as const;

const MEDIA_DIR = new URL('../../fixtures/media/', import.meta.url);
const cache = new Map<MediaFixture, Buffer>();

export function fixtureBytes(name: MediaFixture): Buffer {
  let bytes = cache.get(name);
  if (!bytes) {
    bytes = readFileSync(new URL(name, MEDIA_DIR));
    cache.set(name, bytes);
  }
  return bytes;
}

export const fixtureSize = (name: MediaFixture): number => fixtureBytes(name).length;
