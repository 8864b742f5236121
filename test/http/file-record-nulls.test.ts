import { afterEach, beforeEach, expect, it } from 'vitest';
import { startEmulator } from '../support/harness.ts';
import type { TestEmulator } from '../support/harness.ts';

// No model of the reference makes anything but video files (video-gen-2.0-fast and avatar-photo make videos,
// social-notes-data none), so an audio, image or other file record exists only where a scenario, or the control
// API's complete, makes one. Such a record shows the fields that do not apply to its type as null, wherever the
// task is seen.
// @see reference "File record": width, height (images, videos), duration (audio, video), cover_url (video);
// "Fields that do not apply are null"

let t: TestEmulator;
beforeEach(async () => {
  t = await startEmulator();
});
afterEach(() => t.close());

const NUMBER = expect.any(Number) as unknown;
const ADDRESS = expect.stringMatching(/^http:\/\/127\.0\.0\.1:4010\/files\//) as unknown;

const KINDS = [
  { type: 'audio', mime_type: 'audio/mpeg', width: null, height: null, duration: NUMBER, cover_url: null },
  { type: 'image', mime_type: 'image/png', width: NUMBER, height: NUMBER, duration: null, cover_url: null },
  { type: 'file', mime_type: 'application/pdf', width: null, height: null, duration: null, cover_url: null },
  { type: 'video', mime_type: 'video/mp4', width: NUMBER, height: NUMBER, duration: NUMBER, cover_url: ADDRESS },
];

it.each(KINDS)('shows a scenario\'s result file of type $type with the fields that do not apply to it as null', async ({ type, mime_type, ...fields }) => {
  const scenario = { name: 'other-kinds', queue_seconds: 0, processing_seconds: 0, outcome: 'succeeded', output: { files: [{ type, mime_type }, { type, mime_type }] } };
  expect((await t.admin.post('/_emulator/scenarios', { scenarios: [scenario] })).status).toBe(201);
  const submitted = await t.api.post('/v1/tasks', { model: 'video-gen-2.0-fast', input: { prompt: 'p' } }, { 'X-Emulator-Scenario': 'other-kinds' });
  await t.admin.post('/_emulator/clock/advance', { seconds: 0 });
  const task = (await t.api.get(`/v1/tasks/${submitted.body.id}`)).body;
  expect(task.status).toBe('succeeded');
  // The generated position and one added past it.
  const record = { url: ADDRESS, type, mime_type, size: NUMBER, ...fields, expires_at: expect.any(String) };
  expect(task.output.files).toEqual([record, record]);
  const listed = (await t.api.get('/v1/tasks')).body.data[0];
  expect(listed.output.files).toEqual(task.output.files);
});

it.each(KINDS)('shows a file record of type $type that the control API completes a task with, its inapplicable fields null', async ({ type, mime_type, ...fields }) => {
  const submitted = await t.api.post('/v1/tasks', { model: 'avatar-photo', input: { image: 'https://cdn.example.com/p.jpg', audio: 'https://cdn.example.com/a.mp3' } });
  const done = await t.admin.post(`/_emulator/tasks/${submitted.body.id}/complete`, { output: { files: [{ type, mime_type }] } });
  expect(done.status, JSON.stringify(done.body)).toBe(200);
  const [file] = (await t.api.get(`/v1/tasks/${submitted.body.id}`)).body.output.files as Record<string, unknown>[];
  expect(file).toEqual({ url: ADDRESS, type, mime_type, size: NUMBER, ...fields, expires_at: expect.any(String) });
});

it('keeps what a scenario sets itself on an audio record, nulling only the rest', async () => {
  const submitted = await t.api.post('/v1/tasks', { model: 'video-gen-2.0-fast', input: { prompt: 'p' } });
  const done = await t.admin.post(`/_emulator/tasks/${submitted.body.id}/complete`, {
    output: { files: [{ type: 'audio', mime_type: 'audio/wav', duration: 3.5 }] },
  });
  expect(done.body.output.files[0]).toMatchObject({ type: 'audio', mime_type: 'audio/wav', duration: 3.5, width: null, height: null, cover_url: null });
});
