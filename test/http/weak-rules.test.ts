import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { newAccount, socialNote, startEmulator } from '../support/harness.ts';
import type { ApiClient, TestEmulator } from '../support/harness.ts';
import { failFirst, startReceiver } from '../support/receiver.ts';
import type { Receiver } from '../support/receiver.ts';
import { uploadFile } from '../support/tasks.ts';

// The last weak rules of the emulator: each was once broken without any test failing. Every case here fails if
// its rule breaks, and each sits at the rule's edge (a limit exactly, one past it).
// @see reference "Common request headers" (Idempotency-Key), "POST /v1/tasks" (metadata echoed unchanged),
//   "Events" (webhook-timestamp: send time), "Model: video-gen-2.0-fast" and "Model: avatar-photo" (input
//   parameters), "Errors" → "Codes" (model_unavailable)

let t: TestEmulator;
let api: ApiClient;
let accountId: string;
beforeAll(async () => {
  t = await startEmulator();
  const account = await newAccount(t, '1000000.000');
  accountId = account.id;
  api = t.as(account.key);
});
afterAll(() => t.close());

const MB = 1024 * 1024;
const available = async (): Promise<string> => (await t.admin.get(`/_emulator/accounts/${accountId}`)).body.available as string;
const taskCount = async (): Promise<number> => ((await api.get('/v1/tasks?limit=100')).body.data as unknown[]).length;

// --- Idempotency-Key: 1 to 64 visible characters -----------------------------------------------------------------

it.each([
  ['64 letters', 'k'.repeat(64)],
  // The two ends of the visible range, and punctuation between.
  ['64 visible characters from ! to ~', `!~${'#$%&()*+,-./:;<=>?@[]^_`{|}'.repeat(3).slice(0, 62)}`],
])('takes an Idempotency-Key of exactly %s, and replays by it', async (_name, key) => {
  expect(key).toHaveLength(64);
  const first = await api.post('/v1/tasks', socialNote({ note: `https://notes.example.com/n/${key.length}-${key.charCodeAt(3)}` }), { 'Idempotency-Key': key });
  expect(first.status, JSON.stringify(first.body)).toBe(200);
  expect(first.headers['idempotent-replayed']).toBeUndefined();
  const again = await api.post('/v1/tasks', socialNote({ note: `https://notes.example.com/n/${key.length}-${key.charCodeAt(3)}` }), { 'Idempotency-Key': key });
  expect(again.status).toBe(200);
  expect(again.headers['idempotent-replayed']).toBe('true');
  expect(again.body.id).toBe(first.body.id);
});

// --- metadata, echoed unchanged in the list too ---------------------------------------------------------------------

it('echoes metadata unchanged in the items of the list, as in the submission and the query', async () => {
  const metadata = { ['k'.repeat(64)]: 'v'.repeat(512), emoji: '🙂 ünïcode "quoted" \\ back', empty: '', spaced: '  both ends  ', number_like: '007', json_like: '{"a":1}' };
  const submitted = await api.post('/v1/tasks', { ...socialNote({ note: 'https://notes.example.com/n/metadata' }), metadata });
  expect(submitted.status, JSON.stringify(submitted.body)).toBe(200);
  expect(submitted.body.metadata).toEqual(metadata);
  const list = (await api.get('/v1/tasks?limit=100')).body.data as { id: string; metadata: unknown }[];
  const item = list.find((task) => task.id === submitted.body.id);
  expect(item?.metadata).toEqual(metadata);
  // Key for key, in the order given: nothing added, dropped or rewritten.
  expect(Object.keys(item?.metadata as object)).toEqual(Object.keys(metadata));
  const none = await api.post('/v1/tasks', socialNote({ note: 'https://notes.example.com/n/no-metadata' }));
  const listed = ((await api.get('/v1/tasks?limit=100')).body.data as { id: string; metadata: unknown }[]).find((task) => task.id === none.body.id);
  expect(listed?.metadata).toEqual({});
});

// --- A text model is no task model ---------------------------------------------------------------------------------

it.each(['svc-text-lite', 'svc-text-pro'])('refuses the text model %s on POST /v1/tasks with 404 model_unavailable, creating and charging nothing', async (model) => {
  const [before, tasks] = [await available(), await taskCount()];
  const res = await api.post('/v1/tasks', { model, input: { prompt: 'Hello there' } });
  expect(res.status).toBe(404);
  expect(res.body.error.code).toBe('model_unavailable');
  expect([await available(), await taskCount()]).toEqual([before, tasks]);
});

// --- An empty list where the mode needs one ---------------------------------------------------------------------------

it.each([
  ['video', { videos: [] }, 'input.videos'],
  ['video', { videos: [], images: ['https://cdn.example.com/still.png'] }, 'input.videos'],
  ['reference', { images: [] }, 'input.images'],
  ['reference', { images: [], portraits: [] }, 'input.images'],
])('refuses mode %s with %j as 422 invalid_params naming the list', async (mode, lists, field) => {
  const res = await api.post('/v1/tasks', { model: 'video-gen-2.0-fast', input: { prompt: 'a cat', mode, ...lists } });
  expect(res.status, JSON.stringify(res.body)).toBe(422);
  expect(res.body.error.code).toBe('invalid_params');
  expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
});

// --- voice_audio: 5 to 20 seconds ------------------------------------------------------------------------------------

it.each([
  [20, 200],
  [20.01, 422],
  [21, 422],
])('takes a voice_audio of %f seconds: %i', async (seconds, status) => {
  const voice = await uploadFile(api, 'voice.mp3', 'audio/mpeg', { duration: seconds });
  const res = await api.post('/v1/tasks', { model: 'avatar-photo', input: { image: 'https://cdn.example.com/p.jpg', drive: 'text', content: 'Hello there, everyone.', voice_audio: voice } });
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  if (status === 422) expect(res.body.error.details).toEqual([{ field: 'input.voice_audio', message: 'must be at most 20 seconds long' }]);
});

// --- audio of 50MB: the avatar's speech and the video's reference audio ------------------------------------------------

/**
 * Two uploaded audio files recorded as 50MB and a byte more: an upload is itself at most 50MB, so the record of the
 * larger one is written through the state (export, its size changed, import), as a store holding it would be.
 */
async function audioAtTheLimit(): Promise<{ at: string; over: string }> {
  const at = await uploadFile(api, 'at-limit.mp3', 'audio/mpeg', { duration: 6 });
  const over = await uploadFile(api, 'over-limit.mp3', 'audio/mpeg', { duration: 6 });
  const state = (await t.admin.post('/_emulator/state/export')).body as { files: { id: string; size: number }[] };
  for (const file of state.files) {
    if (file.id === at) file.size = 50 * MB;
    if (file.id === over) file.size = 50 * MB + 1;
  }
  const imported = await t.admin.post('/_emulator/state/import', state);
  expect(imported.status, JSON.stringify(imported.body)).toBe(200);
  return { at, over };
}

it('takes an avatar-photo speech audio and a video reference audio of exactly 50MB, and refuses either a byte larger', async () => {
  const { at, over } = await audioAtTheLimit();
  const avatar = (audio: string): Record<string, unknown> => ({ model: 'avatar-photo', input: { image: 'https://cdn.example.com/p.jpg', drive: 'audio', audio } });
  const video = (audio: string): Record<string, unknown> => ({ model: 'video-gen-2.0-fast', input: { prompt: 'a cat', mode: 'reference', images: ['https://cdn.example.com/still.png'], audio } });
  for (const [body, field] of [
    [avatar, 'input.audio'],
    [video, 'input.audio'],
  ] as const) {
    const accepted = await api.post('/v1/tasks', body(at));
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
    const refused = await api.post('/v1/tasks', body(over));
    expect(refused.status).toBe(422);
    expect(refused.body.error.details).toEqual([{ field, message: `must be at most 50MB (is ${50 * MB + 1} bytes)` }]);
  }
});

// --- webhook-timestamp: each attempt's own send time -----------------------------------------------------------------

let hooks: { t: TestEmulator; receiver: Receiver } | null = null;
afterEach(async () => {
  await hooks?.t.close();
  await hooks?.receiver.close();
  hooks = null;
});

/**
 * A task whose callback fails `failures` times, under `options`: the receiver's requests and the delivery's
 * attempts as the emulator recorded them, after advancing the clock by `retryAfter` seconds at a time.
 */
async function retried(options: Parameters<typeof startEmulator>[0], failures: number): Promise<{ secret: string; receiver: Receiver; emulator: TestEmulator; advance: (s: number) => Promise<unknown>; attempts: () => Promise<{ at: string }[]> }> {
  const receiver = await startReceiver(failFirst(failures));
  const emulator = await startEmulator({ allowInsecureWebhooks: true, webhookTimeoutMs: 300, ...options });
  hooks = { t: emulator, receiver };
  const account = await newAccount(emulator, '1000.000');
  const secret = (await emulator.admin.post(`/_emulator/accounts/${account.id}/webhook`, { url: receiver.url })).body.webhook_secret as string;
  const { id } = (await emulator.as(account.key).post('/v1/tasks', socialNote(), { 'X-Emulator-Scenario': 'instant' })).body as { id: string };
  const advance = (seconds: number): Promise<unknown> => emulator.admin.post('/_emulator/clock/advance', { seconds });
  await advance(0);
  const attempts = async (): Promise<{ at: string }[]> => ((await emulator.admin.get(`/_emulator/webhooks/deliveries?task_id=${id}`)).body.data[0]?.attempts ?? []) as { at: string }[];
  return { secret, receiver, emulator, advance, attempts };
}

const stampOf = (headers: Record<string, unknown>): number => Number(headers['webhook-timestamp']);
const verify = (secret: string, r: Receiver['received'][number]): unknown =>
  new Webhook(secret).verify(r.raw.toString('utf8'), Object.fromEntries(Object.entries(r.headers).map(([k, v]) => [k, String(v)])));

it('with --webhook-timestamps virtual, stamps every attempt with its own send time on the clock: a retry hours later is not the first attempt’s', async () => {
  const { secret, receiver, advance, attempts } = await retried({ webhookTimestamps: 'virtual' }, 4);
  // Retries 1 min, 5 min, 30 min and 2 h after each failure: the fifth attempt is 2 h 36 min after the first.
  for (const seconds of [60, 300, 1800, 7200]) await advance(seconds);
  expect(receiver.received).toHaveLength(5);
  const sent = (await attempts()).map((a) => Date.parse(a.at) / 1000);
  expect(sent).toHaveLength(5);
  expect(receiver.received.map((r) => stampOf(r.headers))).toEqual(sent);
  expect(sent.at(-1)! - sent[0]!).toBe(9360);
  // One webhook-id for all, each signature over its own stamp (verified against the emulator's clock, as its
  // receivers must): a stamp reused would not verify with the signature made for the send.
  expect(new Set(receiver.received.map((r) => r.headers['webhook-id'])).size).toBe(1);
  for (const r of receiver.received) {
    const body = r.raw.toString('utf8');
    const at = new Date(stampOf(r.headers) * 1000);
    const signed = new Webhook(secret).sign(String(r.headers['webhook-id']), at, body);
    expect(String(r.headers['webhook-signature']).split(' ')).toContain(signed);
  }
});

it('by default (real webhook-timestamps), stamps every attempt with the wall time of its own send: a retry hours later on the clock carries its own', async () => {
  const startedMs = Date.now();
  const { secret, receiver, advance } = await retried({}, 1);
  expect(receiver.received).toHaveLength(1);
  const first = stampOf(receiver.received[0]!.headers);
  expect(first).toBeGreaterThanOrEqual(Math.floor(startedMs / 1000));
  // On to the next wall-clock second, so that the first attempt's stamp and the retry's cannot be the same.
  await new Promise((resolve) => setTimeout(resolve, 1000 - (Date.now() % 1000) + 20));
  const retryFromMs = Date.now();
  // Two hours of the clock: the retry due a minute after the failure goes then, in real time now.
  await advance(7200);
  const retryToMs = Date.now();
  expect(receiver.received).toHaveLength(2);
  const retry = stampOf(receiver.received[1]!.headers);
  expect(retry).toBeGreaterThanOrEqual(Math.floor(retryFromMs / 1000));
  expect(retry).toBeLessThanOrEqual(Math.ceil(retryToMs / 1000));
  expect(retry).toBeGreaterThan(first);
  // Both verify as a receiver checks them, against its own clock, 5 minutes either way.
  for (const r of receiver.received) expect(verify(secret, r)).toMatchObject({ type: 'task.succeeded' });
});
