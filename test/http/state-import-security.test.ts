import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import type { Response } from 'supertest';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { StateDocument } from '../../src/state/index.ts';
import { newAccount, socialNote, startEmulator } from '../support/harness.ts';
import type { TestEmulator } from '../support/harness.ts';

// A state document is untrusted input (issue 24, item 1): a file record named `../../x` once made
// `GET /files/..%2F..%2Fx` answer any file of the machine, without a key, and its expiry deleted that file.
// Every field is now checked against openapi/admin.yaml, the rules between records after, and the blob store
// never leaves its folder whatever name it is given.

let root: string;
let outside: string;
let t: TestEmulator;

/** A file-backed emulator: the store in root/emu, its uploads' bytes in root/emu/files: `../../x` from there is root/x. */
async function startInRoot(): Promise<void> {
  root = await mkdtemp(join(tmpdir(), 'svc-state-security-'));
  outside = join(root, 'x');
  await writeFile(outside, 'a file outside the store folder');
  t = await startEmulator({ db: join(root, 'emu', 'store.db'), fileRetentionSeconds: 60 });
}
async function stopInRoot(): Promise<void> {
  await t.close();
  await rm(root, { recursive: true, force: true });
}

interface Detail {
  field: string;
  message: string;
}

const exported = async (): Promise<StateDocument> => (await t.admin.post('/_emulator/state/export')).body as StateDocument;

/** A state with a bit of everything: an account with a key, a finished task, an upload. */
async function workload(): Promise<StateDocument> {
  const account = await newAccount(t, '500.000');
  const api = t.as(account.key);
  expect((await api.post('/v1/tasks', socialNote(), { 'X-Emulator-Scenario': 'instant', 'Idempotency-Key': 'one' })).status).toBe(200);
  expect((await api.post('/v1/files', { filename: 'a.png', mime_type: 'image/png', content: Buffer.from('png').toString('base64') })).status).toBe(200);
  await t.admin.post('/_emulator/clock/advance', { seconds: 1 });
  return exported();
}

/** Imports a document and expects one 422 `invalid_params` naming `field`, with the store just as it was. */
async function expectRefused(document: unknown, field: string | RegExp): Promise<Response> {
  const before = await exported();
  const res = await t.admin.post('/_emulator/state/import', document);
  expect(res.status, JSON.stringify(res.body)).toBe(422);
  expect(res.body.error.code).toBe('invalid_params');
  const fields = (res.body.error.details as Detail[]).map((d) => d.field);
  expect(fields.some((f) => (typeof field === 'string' ? f === field : field.test(f))), fields.join(', ')).toBe(true);
  expect(await exported()).toEqual(before);
  return res;
}

/** A GET of a raw path (kept as written, percent-encodings and all) on the app, the body as bytes. */
const rawGet = (path: string): Promise<Response> =>
  request(t.emulator.app)
    .get(path)
    .buffer(true)
    .parse((res, callback) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => callback(null, Buffer.concat(chunks)));
    });

const TRAVERSALS = ['/files/..%2F..%2Fx', '/files/%2e%2e%2f%2e%2e%2fx', '/files/..%5C..%5Cx', '/files/%2E%2E%2F%2E%2E%2Fx'];

// Each of these changes the store (a record put straight in, the clock moved, an import that takes): an emulator of
// its own.
describe('on an emulator of its own', () => {
  beforeEach(startInRoot);
  afterEach(stopInRoot);

  /** A file record with a traversal name, as if one were in the store (an old store, a bug): straight through the repository. */
  function storeTraversalRecord(accountId: string, expiresInMs: number): void {
    const { clock, internals: { db, store } } = t.emulator;
    store.transaction(() =>
      db.files.insert({
        account_id: accountId, name: '../../x', filename: 'x', type: 'file', mime_type: 'text/plain', size: 31,
        duration: null, width: null, height: null, created_at: '2026-11-23T09:00:00+08:00', expires_ms: clock.now() + expiresInMs, source: { kind: 'blob' },
      }),
    );
  }

  /** An upload of a new account; its served name. */
  async function uploaded(): Promise<{ accountId: string; name: string }> {
    const account = await newAccount(t);
    const res = await t.as(account.key).post('/v1/files', { filename: 'a.png', mime_type: 'image/png', content: Buffer.from('png').toString('base64') });
    expect(res.status).toBe(200);
    return { accountId: account.id, name: String(res.body.url).split('/').pop() ?? '' };
  }

  it('answers 404, never the file, for a stored record whose name climbs out of the store folder', async () => {
    const upload = await uploaded();
    storeTraversalRecord(upload.accountId, 30_000);
    for (const path of TRAVERSALS) {
      const served = await rawGet(path);
      expect(served.status, path).toBe(404);
      expect(served.headers['content-type'], path).toMatch(/json/);
      expect(String(served.body), path).not.toContain('outside the store folder');
    }
    expect((await rawGet(`/files/${upload.name}`)).status).toBe(200);
  });

  it('never deletes the file a stored record names by traversal when the record expires', async () => {
    const upload = await uploaded();
    storeTraversalRecord(upload.accountId, 30_000);
    // Past both expiries: the record and the upload's bytes go, the file the bad record names stays.
    await t.admin.post('/_emulator/clock/advance', { seconds: 120 });
    expect(t.emulator.internals.db.files.byName('../../x')).toBeUndefined();
    expect((await rawGet(`/files/${upload.name}`)).status).toBe(404);
    expect(existsSync(join(root, 'emu', 'files', upload.name))).toBe(false);
    expect(await readFile(outside, 'utf8')).toBe('a file outside the store folder');
  });

  it('answers 404 for a stored result file whose media fixture names a file outside fixtures/media', async () => {
    const account = await newAccount(t);
    const { clock, internals: { db, store } } = t.emulator;
    const name = 'Ab3dEf6hIj9lMn2pQr5tUv8xYz1bCd4f.mp4';
    store.transaction(() =>
      db.files.insert({
        account_id: account.id, name, filename: 'video.mp4', type: 'video', mime_type: 'video/mp4', size: 1, duration: null, width: null,
        height: null, created_at: '2026-11-23T09:00:00+08:00', expires_ms: clock.now() + 30_000, source: { kind: 'fixture', fixture: '../../package.json' as 'sample.mp4' },
      }),
    );
    const served = await rawGet(`/files/${name}`);
    expect(served.status).toBe(404);
    expect(String(served.body)).not.toContain('"name": "svc-emulator"');
  });

  it('still imports every document the emulator exports', async () => {
    const state = await workload();
    const res = await t.admin.post('/_emulator/state/import', state);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(await exported()).toEqual(state);
  });
});

// A refused import changes nothing (expectRefused checks the store before and after): one emulator and one exported
// state serve every refusal, each test damaging its own copy of that state.
describe('refusing a document, the store kept', () => {
  let shared: StateDocument;
  beforeAll(async () => {
    await startInRoot();
    shared = await workload();
  });
  afterAll(stopInRoot);
  /** The state of the workload (a bit of everything: an account with a key, a finished task, an upload), a copy. */
  const copy = (): StateDocument => structuredClone(shared);

  it('refuses a file record that names a file outside the store by traversal, and never serves that file', async () => {
    const state = copy();
    const [upload] = state.files;
    if (!upload) throw new Error('the workload made no file');
    const attack = { ...state, files: [...state.files, { ...upload, id: 'file_99', name: '../../x' }] };

    const res = await expectRefused(attack, `files[${state.files.length}].name`);
    expect(res.body.error.message).toContain('name');
    for (const path of TRAVERSALS) {
      const served = await rawGet(path);
      expect(served.status, path).toBe(404);
      expect(String(served.body), path).not.toContain('outside the store folder');
    }
    expect(await readFile(outside, 'utf8')).toBe('a file outside the store folder');
  });

  it.each([
    ['an absolute path', '/etc/passwd'],
    ['a percent-encoded traversal', '..%2F..%2Fx'],
    ['a name with a folder', 'a/b.png'],
    ['a NUL', 'x\u0000y.png'],
    ['a name the emulator does not make', 'my-own-name.png'],
  ])('refuses a file record whose name is %s', async (_what, name) => {
    const state = copy();
    await expectRefused({ ...state, files: state.files.map((f) => ({ ...f, name })) }, 'files[0].name');
  });

  it('refuses a file record whose media fixture is not one of the emulator’s own files', async () => {
    const state = copy();
    const files = state.files.map((f) => ({ ...f, source: { kind: 'fixture', fixture: '../../package.json' } }));
    await expectRefused({ ...state, files }, /^files\[0\]\.source/);
  });

  it('refuses a document whose balances disagree with its ledger, naming the balance, and keeps the store', async () => {
    const state = copy();
    const i = state.accounts.findIndex((a) => a.id !== 'acct_demo');
    const accounts = state.accounts.map((a, k) => (k === i ? { ...a, available: '999999.000' } : a));
    const res = await expectRefused({ ...state, accounts }, `accounts[${i}].available`);
    expect(res.body.error.message).toMatch(/^accounts\[\d+\]\.available is 999999\.000, but the ledger's entries of acct_\w+ make it \d+\.\d{3}$/);
  });

  it('refuses a ledger entry whose points would leave frozen points without a freeze', async () => {
    const state = copy();
    const ledger = state.ledger.map((e) => (e.kind === 'charge' ? { ...e, points: '10.000' } : e));
    await expectRefused({ ...state, ledger }, /^accounts\[\d+\]\.(frozen|charged)$/);
  });

  it.each<[string, (s: StateDocument) => Record<string, unknown>, string | RegExp]>([
    ['an account with no fields', (s) => ({ ...s, accounts: [{}] }), 'accounts[0].id'],
    ['a task that is a number', (s) => ({ ...s, tasks: [1] }), 'tasks[0]'],
    ['a task with no fields', (s) => ({ ...s, tasks: [{}] }), 'tasks[0].task'],
    ['a task object missing its status', (s) => ({ ...s, tasks: s.tasks.map((x) => ({ ...x, task: { ...x.task, status: undefined } })) }), 'tasks[0].task.status'],
    ['a ledger entry with points as a number', (s) => ({ ...s, ledger: s.ledger.map((e) => ({ ...e, points: 5 })) }), 'ledger[0].points'],
    ['a call record with a made-up time', (s) => ({ ...s, calls: s.calls.map((c) => ({ ...c, at: 'yesterday' })) }), 'calls[0].at'],
    ['a delivery with no attempts list', (s) => ({ ...s, deliveries: [{ id: 'msg_x' }] }), 'deliveries[0].account_id'],
    ['a file record with no source', (s) => ({ ...s, files: s.files.map(({ source: _s, ...f }) => f) }), 'files[0].source'],
    ['a key with an unknown field', (s) => ({ ...s, keys: s.keys.map((k) => ({ ...k, admin: true })) }), 'keys[0].admin'],
    ['an unknown section', (s) => ({ ...s, secrets: [] }), 'secrets'],
    ['a section that is not a list', (s) => ({ ...s, files: {} }), 'files'],
  ])('answers 422, not 500, for a malformed document: %s', async (_what, damage, field) => {
    const state = copy();
    await expectRefused(damage(state), field);
  });

  it.each<[string, (s: StateDocument) => Record<string, unknown>, string]>([
    ['a task id used twice', (s) => ({ ...s, tasks: [...s.tasks, ...s.tasks] }), 'tasks[1].task.id'],
    ['a file name used twice', (s) => ({ ...s, files: [...s.files, ...s.files.map((f) => ({ ...f, id: 'file_7' }))] }), 'files[1].name'],
    ['a ledger id used twice', (s) => ({ ...s, ledger: [s.ledger[0], ...s.ledger] }), 'ledger[1].id'],
    ['a key of an account the document does not hold', (s) => ({ ...s, keys: s.keys.map((k) => ({ ...k, account_id: 'acct_nobody' })) }), 'keys[0].account_id'],
    ['an idempotency key of a task the document does not hold', (s) => ({ ...s, idempotency: s.idempotency.map((r) => ({ ...r, task_id: 'T261123090000ZZZZZZ' })) }), 'idempotency[0].task_id'],
  ])('refuses %s, naming it', async (_what, damage, field) => {
    await expectRefused(damage(copy()), field);
  });
});
