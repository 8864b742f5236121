import { afterEach, beforeEach, expect, it } from 'vitest';
import { newAccount, startEmulator } from '../support/harness.ts';
import type { ApiClient, TestEmulator } from '../support/harness.ts';
import { runTask, uploadFile } from '../support/tasks.ts';

// avatar-photo reports the actual seconds and bills them rounded up: output.duration and the result video's
// file record say 7.2 for 7.2 s of speech audio, while the charge is 8 s × the quality's per-second price.
// @see reference "output object" (duration: actual duration in seconds), "File record" (duration: seconds),
// "Model: avatar-photo" Price (charge = seconds rounded up × per-second price)

let t: TestEmulator;
let account: { id: string; key: string };
let api: ApiClient;
beforeEach(async () => {
  t = await startEmulator();
  account = await newAccount(t, '10000.000');
  api = t.as(account.key);
});
afterEach(() => t.close());

const upload = (filename: string, mimeType: string, extra: Record<string, unknown> = {}) => uploadFile(api, filename, mimeType, extra);
const run = (body: Record<string, unknown>, scenario = 'instant') => runTask(t, api, body, scenario);
/** The stored record of a result file, as the state export holds it (its address ends with the file's name). */
const storedFile = async (url: string) => {
  const state = (await t.admin.post('/_emulator/state/export')).body as { files: { name: string; duration: number | null }[] };
  return state.files.find((file) => url.endsWith(`/${file.name}`));
};

it('avatar-photo with 7.2 s of speech audio reports 7.2 s and bills 8 s (standard: 48.000)', async () => {
  const image = await upload('face.jpg', 'image/jpeg', { width: 800, height: 1000 });
  const audio = await upload('speech.mp3', 'audio/mpeg', { duration: 7.2 });
  const task = await run({ model: 'avatar-photo', input: { image, audio } });
  expect(task.status).toBe('succeeded');
  expect(task.input.quality).toBe('standard');
  expect(task.output.duration).toBe(7.2);
  expect(task.output.files).toHaveLength(1);
  expect(task.output.files[0]).toMatchObject({ type: 'video', mime_type: 'video/mp4', duration: 7.2, width: 800, height: 1000 });
  expect(await storedFile(task.output.files[0].url)).toMatchObject({ duration: 7.2 });
  expect(task.points).toEqual({ frozen: '60.000', charged: '48.000', refunded: '12.000' });
});

it('avatar-photo with drive text reports the finished video seconds as they are and bills them rounded up', async () => {
  await t.admin.post('/_emulator/scenarios', {
    scenarios: [{ name: 'eight-point-four', queue_seconds: 0, processing_seconds: 0, outcome: 'succeeded', settle: { seconds: 8.4 } }],
  });
  const task = await run(
    {
      model: 'avatar-photo',
      input: { image: 'https://cdn.example.com/p.jpg', drive: 'text', content: 'Hello there', voice_audio: 'https://cdn.example.com/v.mp3', quality: 'max' },
    },
    'eight-point-four',
  );
  expect(task.output.duration).toBe(8.4);
  expect(task.output.files[0].duration).toBe(8.4);
  expect(await storedFile(task.output.files[0].url)).toMatchObject({ duration: 8.4 });
  // 8.4 s billed as 9 s × 8 points (max) = 72.000 of the 80.000 frozen.
  expect(task.points).toEqual({ frozen: '80.000', charged: '72.000', refunded: '8.000' });
});

it('avatar-photo with whole seconds of audio reports and bills the same seconds', async () => {
  const audio = await upload('speech.mp3', 'audio/mpeg', { duration: 8 });
  const task = await run({ model: 'avatar-photo', input: { image: 'https://cdn.example.com/p.jpg', audio, quality: 'fast' } });
  expect(task.output.duration).toBe(8);
  expect(task.output.files[0].duration).toBe(8);
  expect(task.points).toEqual({ frozen: '40.000', charged: '32.000', refunded: '8.000' });
});
