import { expect, it } from 'vitest';
import { checkHistory } from '../../../src/observed/index.ts';
import type { History } from '../../../src/observed/index.ts';
import { at, checksOf, CONTEXT, read, requestIdsOf, task } from './histories.ts';
import type { Json } from './histories.ts';

// The result files of succeeded tasks: video records for the video models, none for the text-only one.

const RECORD: Json = {
  url: 'https://files.example.com/files/aaaaaaaa.mp4',
  type: 'video',
  mime_type: 'video/mp4',
  size: 48_213,
  width: 480,
  height: 854,
  duration: 4,
  cover_url: 'https://files.example.com/files/bbbbbbbb.jpg',
  expires_at: at(7 * 86_400),
};
const POINTS = { frozen: '388.800', charged: '388.800', refunded: '0.000' };

/** A succeeded video-gen-2.0-fast (or other) task with `files` as its output's. */
const video = (files: unknown, model = 'video-gen-2.0-fast'): Json =>
  task('succeeded', { model, input: { prompt: 'p', resolution: '480p', ratio: '9:16', duration: 4 }, points: POINTS, output: { files, duration: 4 } });
const history = (body: Json): History => ({ tasks: [read('get', 'req_done', 30, body)] });

it.each<[string, Json, string]>([
  ['a video record whose cover_url is null', video([{ ...RECORD, cover_url: null }]), 'files.result.record-fields'],
  ['a video record without cover_url', video([Object.fromEntries(Object.entries(RECORD).filter(([k]) => k !== 'cover_url'))]), 'files.result.record-fields'],
  ['a video record whose size is not whole bytes', video([{ ...RECORD, size: 48.5 }]), 'files.result.record-fields'],
  ['a video record without width', video([{ ...RECORD, width: null }]), 'files.result.record-fields'],
  ['a video record whose duration is a string', video([{ ...RECORD, duration: '4' }]), 'files.result.record-fields'],
  ['a video record that expires before the task finished', video([{ ...RECORD, expires_at: at(10) }]), 'files.result.record-fields'],
  ['a video record whose expires_at is not Beijing time', video([{ ...RECORD, expires_at: '2026-12-03T02:00:00Z' }]), 'files.result.record-fields'],
  ['a video record of type file', video([{ ...RECORD, type: 'file' }]), 'files.result.record-fields'],
  ['a video record typed image/jpeg', video([{ ...RECORD, mime_type: 'image/jpeg' }]), 'files.result.record-fields'],
  ['a succeeded video whose files is not a list', video({ ...RECORD }), 'files.result.record-fields'],
  ['a succeeded avatar video without a url', video([{ ...RECORD, url: 'files/aaaaaaaa.mp4' }], 'avatar-photo'), 'files.result.record-fields'],
  ['a succeeded notes task with a file', task('succeeded', { output: { text: 'note details', files: [RECORD] } }), 'files.result.text-only-empty'],
  ['a succeeded notes task whose files is null', task('succeeded', { output: { text: 'note details', files: null } }), 'files.result.text-only-empty'],
])('reports %s', (_name, body, check) => {
  const found = checkHistory(history(body), CONTEXT);
  expect(checksOf(found)).toEqual([check]);
  expect(requestIdsOf(found)).toEqual(['req_done']);
});

it('names every wrong field of every record in one finding', () => {
  const found = checkHistory(history(video([RECORD, { ...RECORD, cover_url: null, height: 0 }])), CONTEXT);
  expect(found.map((d) => d.message)).toEqual([
    expect.stringMatching(/^succeeded video-gen-2\.0-fast task T\w+ \(req_done\): output\.files\[1\] height is 0, expected pixels; output\.files\[1\] cover_url is null, expected the cover image address$/),
  ]);
});

it('accepts complete video records of both video models, and a notes task without files', () => {
  expect(checkHistory(history(video([RECORD, { ...RECORD, url: 'http://127.0.0.1:4010/files/c.mp4' }])), CONTEXT)).toEqual([]);
  expect(checkHistory(history(video([RECORD], 'avatar-photo')), CONTEXT)).toEqual([]);
  expect(checkHistory(history(task('succeeded')), CONTEXT)).toEqual([]);
});

it('judges no other model, and no task that has not succeeded', () => {
  expect(checkHistory(history(video([{ ...RECORD, cover_url: null }], 'image-gen-x')), CONTEXT)).toEqual([]);
  expect(checkHistory({ tasks: [read('get', 'req_q', 3, task('processing', { model: 'video-gen-2.0-fast', output: null }))] }, CONTEXT)).toEqual([]);
});
