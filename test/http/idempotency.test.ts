import { afterEach, beforeEach, expect, it } from 'vitest';
import { newAccount, socialNote, startEmulator } from '../support/harness.ts';
import type { TestEmulator } from '../support/harness.ts';

let t: TestEmulator;
beforeEach(async () => {
  t = await startEmulator();
});
afterEach(() => t.close());

const withKey = (key: string) => ({ 'Idempotency-Key': key });

it('replays the first task with Idempotent-Replayed: true and freezes once', async () => {
  const first = await t.api.post('/v1/tasks', socialNote(), withKey('order-1'));
  expect(first.status).toBe(200);
  expect(first.headers['idempotent-replayed']).toBeUndefined();
  const again = await t.api.post('/v1/tasks', socialNote(), withKey('order-1'));
  expect(again.status).toBe(200);
  expect(again.headers['idempotent-replayed']).toBe('true');
  expect(again.body).toEqual(first.body);
  expect((await t.admin.get('/_emulator/accounts/acct_demo')).body.frozen).toBe('40.000');
  expect((await t.api.get('/v1/tasks')).body.data).toHaveLength(1);
});

it('treats requests that normalize equal as the same parameters', async () => {
  const first = await t.api.post(
    '/v1/tasks',
    { model: 'video-gen-2.0-fast', input: { prompt: 'p', duration: '6' } },
    withKey('k'),
  );
  const again = await t.api.post(
    '/v1/tasks',
    { model: 'video-gen-2.0-fast', params: { duration: 6, resolution: '720p', prompt: 'p', unknown: true } },
    withKey('k'),
  );
  expect(again.headers['idempotent-replayed']).toBe('true');
  expect(again.body.id).toBe(first.body.id);
});

it('answers 409 idempotency_conflict for different parameters and creates nothing', async () => {
  await t.api.post('/v1/tasks', socialNote(), withKey('k'));
  const conflict = await t.api.post('/v1/tasks', socialNote({ note: 'another note' }), withKey('k'));
  expect(conflict.status).toBe(409);
  expect(conflict.body.error.code).toBe('idempotency_conflict');
  expect((await t.api.get('/v1/tasks')).body.data).toHaveLength(1);
  expect((await t.admin.get('/_emulator/accounts/acct_demo')).body.frozen).toBe('40.000');
});

it('answers 409 idempotency_conflict for a different model', async () => {
  await t.api.post('/v1/tasks', socialNote(), withKey('k'));
  const conflict = await t.api.post('/v1/tasks', { model: 'video-gen-2.0-fast', input: { prompt: 'p' } }, withKey('k'));
  expect(conflict.status).toBe(409);
  expect(conflict.body.error.code).toBe('idempotency_conflict');
});

it('does not count metadata or webhook_url as parameters', async () => {
  const first = await t.api.post('/v1/tasks', { ...socialNote(), metadata: { a: '1' } }, withKey('k'));
  const again = await t.api.post(
    '/v1/tasks',
    { ...socialNote(), metadata: { a: '2' }, webhook_url: 'https://hooks.example.com/x' },
    withKey('k'),
  );
  expect(again.headers['idempotent-replayed']).toBe('true');
  expect(again.body.metadata).toEqual(first.body.metadata);
});

it('keeps keys per account: the same key in two accounts makes two tasks', async () => {
  const other = await newAccount(t);
  const mine = await t.api.post('/v1/tasks', socialNote(), withKey('shared'));
  const theirs = await t.as(other.key).post('/v1/tasks', socialNote(), withKey('shared'));
  expect(theirs.status).toBe(200);
  expect(theirs.headers['idempotent-replayed']).toBeUndefined();
  expect(theirs.body.id).not.toBe(mine.body.id);
});

it('never expires a key: a replay a year later still answers the first task', async () => {
  const first = await t.api.post('/v1/tasks', socialNote(), withKey('k'));
  await t.admin.post('/_emulator/clock/advance', { seconds: 365 * 24 * 3600 });
  const again = await t.api.post('/v1/tasks', socialNote(), withKey('k'));
  expect(again.headers['idempotent-replayed']).toBe('true');
  expect(again.body.id).toBe(first.body.id);
});

it('replays after an uploaded input file has expired, instead of refusing the file', async () => {
  const upload = async (filename: string): Promise<{ id: string; url: string }> =>
    (await t.api.post('/v1/files', { content: Buffer.from(`bytes of ${filename}`).toString('base64'), filename })).body;
  const image = await upload('face.png');
  const audio = await upload('speech.mp3');
  const body = { model: 'avatar-photo', input: { image: image.id, audio: audio.url } };
  const first = await t.api.post('/v1/tasks', body, withKey('with-files'));
  expect(first.status, JSON.stringify(first.body)).toBe(200);
  await t.admin.post('/_emulator/clock/advance', { seconds: 8 * 24 * 3600 }); // files live 7 days by default
  const again = await t.api.post('/v1/tasks', body, withKey('with-files'));
  expect(again.status, JSON.stringify(again.body)).toBe(200);
  expect(again.headers['idempotent-replayed']).toBe('true');
  expect(again.body.id).toBe(first.body.id);
  // Without the key (or with a new one) the expired files are refused as before.
  for (const headers of [{}, withKey('another')]) {
    const fresh = await t.api.post('/v1/tasks', body, headers);
    expect(fresh.status).toBe(422);
    expect(fresh.body.error.details.map((d: { field: string }) => d.field)).toEqual(['input.image', 'input.audio']);
  }
  // A different body under the old key is still a conflict, not a file problem.
  const conflict = await t.api.post('/v1/tasks', { model: 'avatar-photo', input: { image: image.id, audio: audio.id } }, withKey('with-files'));
  expect(conflict.status).toBe(409);
  expect(conflict.body.error.code).toBe('idempotency_conflict');
  expect((await t.api.get('/v1/tasks')).body.data).toHaveLength(1);
});

it('replays after an input address has come to resolve to an internal address', async () => {
  const names: Record<string, string[]> = { 'cdn.example.net': ['93.184.216.34'] };
  const own = await startEmulator({ resolveHost: async (host) => names[host] ?? [] });
  try {
    const body = { model: 'avatar-photo', input: { image: 'https://cdn.example.net/p.png', audio: 'https://cdn.example.net/a.mp3' } };
    const first = await own.api.post('/v1/tasks', body, withKey('k'));
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    names['cdn.example.net'] = ['10.0.0.7'];
    const again = await own.api.post('/v1/tasks', body, withKey('k'));
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body.id).toBe(first.body.id);
    expect((await own.api.post('/v1/tasks', body, withKey('k2'))).status).toBe(422);
  } finally {
    await own.close();
  }
});

it('replays after the first task was canceled, showing it as it is now', async () => {
  const first = await t.api.post('/v1/tasks', socialNote(), withKey('k'));
  await t.api.post(`/v1/tasks/${first.body.id}/cancel`);
  const again = await t.api.post('/v1/tasks', socialNote(), withKey('k'));
  expect(again.body.status).toBe('canceled');
  expect((await t.admin.get('/_emulator/accounts/acct_demo')).body.frozen).toBe('0.000');
});

it('creates one task and one freeze for 50 concurrent submits with one key', async () => {
  const answers = await Promise.all(
    Array.from({ length: 50 }, () => t.api.post('/v1/tasks', socialNote(), withKey('burst'))),
  );
  expect(answers.map((a) => a.status)).toEqual(Array(50).fill(200));
  expect(new Set(answers.map((a) => a.body.id)).size).toBe(1);
  expect(answers.filter((a) => a.headers['idempotent-replayed'] === 'true')).toHaveLength(49);
  const account = (await t.admin.get('/_emulator/accounts/acct_demo')).body;
  expect(account).toMatchObject({ available: '99960.000', frozen: '40.000' });
  expect((await t.api.get('/v1/tasks')).body.data).toHaveLength(1);
});

it('creates one task for 50 concurrent submits with one key over real HTTP connections', async () => {
  const base = await t.emulator.listen(0);
  const answers = await Promise.all(
    Array.from({ length: 50 }, () =>
      fetch(`${base}/v1/tasks`, {
        method: 'POST',
        headers: {
          Authorization: 'Bearer sk-emulator-demo',
          'Content-Type': 'application/json',
          'Idempotency-Key': 'socket-burst',
        },
        body: JSON.stringify(socialNote()),
      }).then(async (r) => ({ status: r.status, body: (await r.json()) as { id: string } })),
    ),
  );
  expect(answers.every((a) => a.status === 200)).toBe(true);
  expect(new Set(answers.map((a) => a.body.id)).size).toBe(1);
  expect((await t.admin.get('/_emulator/accounts/acct_demo')).body.frozen).toBe('40.000');
});
