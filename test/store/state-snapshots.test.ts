import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { StateDocument } from '../../src/state/index.ts';
import { newAccount, socialNote, startEmulator } from '../support/harness.ts';
import type { TestEmulator } from '../support/harness.ts';
import { startReceiver } from '../support/receiver.ts';
import type { Receiver } from '../support/receiver.ts';

/** State snapshots: the whole store as a readable JSON document, out and back in, and the journal stores of old. */

let dir: string;
let receiver: Receiver | null = null;
const open: TestEmulator[] = [];
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-state-'));
});
afterEach(async () => {
  for (const t of open.splice(0)) await t.close();
  await receiver?.close();
  receiver = null;
  await rm(dir, { recursive: true, force: true });
});

const started = async (options: Parameters<typeof startEmulator>[0] = {}): Promise<TestEmulator> => {
  const t = await startEmulator({ allowInsecureWebhooks: true, ...options });
  open.push(t);
  return t;
};

/** A store with a bit of everything: accounts, keys with settings, tasks in every state, callbacks, files, calls. */
async function workload(t: TestEmulator): Promise<{ queued: string; key: string }> {
  receiver = await startReceiver((_n, res) => res.writeHead(200).end('ok'));
  const account = await newAccount(t, '5000.000');
  await t.admin.post(`/_emulator/accounts/${account.id}/webhook`, { url: receiver.url });
  await t.admin.post(`/_emulator/accounts/${account.id}/keys`, { rpm: 100, quota: { points: '1000.000', period: 'daily' } });
  await t.admin.post('/_emulator/scenarios', { scenarios: [{ name: 'later', outcome: 'succeeded', queue_seconds: 300, processing_seconds: 5 }] });
  const api = t.as(account.key);
  await api.post('/v1/tasks', socialNote(), { 'X-Emulator-Scenario': 'instant', 'Idempotency-Key': 'one' });
  await api.post('/v1/files', { filename: 'a.png', mime_type: 'image/png', content: Buffer.from('png').toString('base64') });
  const queued = (await api.post('/v1/tasks', socialNote({ note: 'n2' }), { 'X-Emulator-Scenario': 'later' })).body.id as string;
  await t.admin.post('/_emulator/clock/advance', { seconds: 10 });
  return { queued, key: account.key };
}

const sections = (doc: StateDocument): Omit<StateDocument, 'exported_at' | 'clock_ms'> => {
  const { exported_at: _at, clock_ms: _clock, ...rest } = doc;
  return rest;
};

it('exports the whole state and imports it into another emulator, record for record', async () => {
  const source = await started({ startTime: '2026-11-23T09:00:00+08:00' });
  await workload(source);
  const exported = (await source.admin.post('/_emulator/state/export')).body as StateDocument;
  expect(exported).toMatchObject({ format: 'svc-emulator-state', version: 1 });
  expect(exported.tasks).toHaveLength(2);
  expect(exported.deliveries.length).toBeGreaterThan(0);
  expect(exported.idempotency).toEqual([expect.objectContaining({ key: 'one' })]);

  const target = await started({ startTime: '2026-11-23T09:00:00+08:00' });
  const imported = await target.admin.post('/_emulator/state/import', exported);
  expect(imported.status).toBe(200);
  expect(imported.body).toEqual({ ok: true, accounts: exported.accounts.length, keys: exported.keys.length, tasks: 2 });
  const again = (await target.admin.post('/_emulator/state/export')).body as StateDocument;
  // The import's own request is recorded as it ends: everything else is as it was.
  expect(sections({ ...again, calls: again.calls.slice(0, exported.calls.length) })).toEqual(sections(exported));
});

it('starts from a state file (--import) and writes one when it stops (--export-on-exit); imported work goes on', async () => {
  const source = await started({ startTime: '2026-11-23T09:00:00+08:00' });
  const { queued, key } = await workload(source);
  const file = join(dir, 'prepared.json');
  await writeFile(file, JSON.stringify((await source.admin.post('/_emulator/state/export')).body));
  // Readable: indented JSON, a fixture to commit.
  const atExit = join(dir, 'at-exit.json');
  const t = await startEmulator({ importState: file, exportOnExit: atExit, startTime: '2026-11-23T09:00:10+08:00', allowInsecureWebhooks: true });
  expect((await t.as(key).get(`/v1/tasks/${queued}`)).body.status).toBe('queued');
  await t.admin.post('/_emulator/clock/advance', { seconds: 400 });
  expect((await t.as(key).get(`/v1/tasks/${queued}`)).body.status).toBe('succeeded');
  await t.close();
  const written = await readFile(atExit, 'utf8');
  expect(written).toContain('\n  "format": "svc-emulator-state"');
  const state = JSON.parse(written) as StateDocument;
  expect(state.tasks.find((s) => s.task.id === queued)?.task.status).toBe('succeeded');
  expect(receiver?.received.some((r) => (JSON.parse(r.raw.toString()) as { data: { id: string } }).data.id === queued)).toBe(true);
});

it('refuses what is not a state document with 422 and keeps the store as it was', async () => {
  const t = await started();
  const before = (await t.admin.post('/_emulator/state/export')).body as StateDocument;
  const res = await t.admin.post('/_emulator/state/import', { format: 'something-else', accounts: [] });
  expect(res.status).toBe(422);
  expect(res.body.error.code).toBe('invalid_params');
  const after = (await t.admin.post('/_emulator/state/export')).body as StateDocument;
  expect(after.accounts).toEqual(before.accounts);
});

it('imports a store of the journal engine once, on the first start, and sets its files aside', async () => {
  const path = join(dir, 'db.json');
  const account = { id: 'acct_old', available: '60.000', frozen: '40.000', charged: '0.000', webhook_url: null, webhook_secret: 'whsec_b2xk', created_at: '2026-11-20T09:00:00+08:00' };
  const task = {
    task: { id: 'T261120090000ABC123', object: 'task', model: 'social-notes-data', status: 'queued', created_at: '2026-11-20T09:00:00+08:00', started_at: null, finished_at: null, input: { mode: 'note', note: 'n', agree: true, sort: 'general', note_type: 'all', page: 1 }, points: { frozen: '40.000', charged: '0.000', refunded: '0.000' }, output: null, error: null, metadata: {} },
    account_id: 'acct_old', seq: 3, idempotency_key: null, created_ms: Date.parse('2026-11-20T09:00:00+08:00'), started_ms: null,
    plan: { scenario: 'default', queue_ms: 2000, processing_ms: 10000, outcome: 'succeeded', failure: null, cancelable_while_processing: false, output: null, settle: null },
    key: 'sk-old',
  };
  const lines = [
    { format: 'svc-emulator-store', version: 1, generation: 1 },
    ['accounts', 'acct_old', { ...account, available: '100.000', frozen: '0.000' }],
    ['keys', 'sk-old', { key: 'sk-old', account_id: 'acct_old', created_at: '2026-11-20T09:00:00+08:00' }],
    ['ledger', '0', { id: 1, account_id: 'acct_old', kind: 'fund', points: '100.000', task_id: null, at: '2026-11-20T09:00:00+08:00' }],
    ['', 'clock_ms', Date.parse('2026-11-20T09:00:00+08:00')],
  ];
  await writeFile(path, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  // The journal after the snapshot: the submission, then a torn last line a crash left.
  const journal = [
    [['tasks', task.task.id, task], ['accounts', 'acct_old', account], ['ledger', '1', { id: 2, account_id: 'acct_old', kind: 'freeze', points: '40.000', task_id: task.task.id, at: '2026-11-20T09:00:00+08:00' }]],
  ];
  await writeFile(`${path}.1.journal`, journal.map((l) => JSON.stringify(l)).join('\n') + '\n[["accounts","acct_o');
  const warnings: string[] = [];
  const t = await started({ db: path, log: (line) => warnings.push(line) });
  expect(warnings.join('\n')).toMatch(/imported the journal store .*db\.json \(1 tasks, 1 accounts\); its files are in .*db\.json\.journal-store/);
  expect(readdirSync(join(dir, 'db.json.journal-store')).sort()).toEqual(['db.json', 'db.json.1.journal']);
  expect((await t.as('sk-old').get(`/v1/tasks/${task.task.id}`)).body).toMatchObject({ id: task.task.id, status: 'queued' });
  expect((await t.admin.get('/_emulator/accounts/acct_old')).body).toMatchObject({ available: '60.000', frozen: '40.000' });
  // The queued task goes on, as it would have.
  await t.admin.post('/_emulator/clock/advance', { seconds: 60 });
  expect((await t.as('sk-old').get(`/v1/tasks/${task.task.id}`)).body.status).toBe('succeeded');
  await t.close();
  open.splice(0);
  // Once: the next start opens the SQLite store in its place.
  const again = await started({ db: path, log: (line) => warnings.push(line) });
  expect(warnings.filter((w) => w.includes('imported'))).toHaveLength(1);
  expect(existsSync(join(dir, 'db.json.journal-store'))).toBe(true);
  expect((await again.as('sk-old').get(`/v1/tasks/${task.task.id}`)).body.status).toBe('succeeded');
});
