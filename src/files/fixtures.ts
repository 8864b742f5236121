import { readFileSync } from 'node:fs';
import { renderMedia } from '../results/index.ts';
import type { GeneratedMedia } from '../results/index.ts';

/**
 * Media of the emulator's own, served as result files: generated media (a video or cover made to the record's
 * size and duration, carrying the AIGC label), or, for file records made before results were generated and kept
 * in exported states, one of the files in fixtures/media.
 */
export type MediaFixture = 'sample.mp4' | 'cover.jpg' | GeneratedMedia;

const MEDIA_DIR = new URL('../../fixtures/media/', import.meta.url);
const FIXTURE_FILES: readonly string[] = ['sample.mp4', 'cover.jpg'];
const cache = new Map<string, Buffer>();

/** The bytes of a media fixture; undefined when a stored description is not one the emulator can render. */
export function fixtureBytes(fixture: MediaFixture): Buffer | undefined {
  if (typeof fixture !== 'string') return renderMedia(fixture);
  // An imported state may name anything: only the fixture files themselves are read.
  if (!FIXTURE_FILES.includes(fixture)) return undefined;
  let bytes = cache.get(fixture);
  if (!bytes) {
    bytes = readFileSync(new URL(fixture, MEDIA_DIR));
    cache.set(fixture, bytes);
  }
  return bytes;
}
