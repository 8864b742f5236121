import request from 'supertest';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createClock } from '../../src/index.ts';
import { ADMIN_TOKEN, DEMO_KEY, socialNote, startEmulator } from '../support/harness.ts';
import type { ApiClient, TestEmulator } from '../support/harness.ts';
import { expectResponseMatchesSpec } from '../support/spec-check.ts';

let t: TestEmulator;
afterEach(() => t.close());

/** A /_emulator client with a session's own admin token, each answer checked against the document. */
const adminAs = (token: string, extra: Record<string, string> = {}): ApiClient => {
  const checked = async (test: request.Test): Promise<request.Response> => {
    const res = await test;
    expectResponseMatchesSpec(res, 'admin');
    return res;
  };
  const auth = { Authorization: `Bearer ${token}`, ...extra };
  return {
    get: (path, headers = {}) => checked(request(t.emulator.app).get(path).set({ ...auth, ...headers })),
    post: (path, body, headers = {}) => checked(request(t.emulator.app).post(path).set({ ...auth, ...headers }).send((body ?? {}) as object)),
    send: (build) => checked(build(request(t.emulator.app))),
  };
};

async function newSession(body: Record<string, unknown> = {}): Promise<{ id: string; key: string; token: string; account: string; secret: string }> {
  const res = await t.admin.post('/_emulator/sessions', body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return { id: res.body.id, key: res.body.key, token: res.body.admin_token, account: res.body.account.id, secret: res.body.webhook_secret };
}

describe('a session made through the control API', () => {
  beforeEach(async () => {
    t = await startEmulator();
  });

  it('answers its id, a key and account of its own, a whsec_ secret and its own admin token', async () => {
    const res = await t.admin.post('/_emulator/sessions', { name: 'worker 1', clock: { mode: 'manual', start_time: '2027-01-01T00:00:00+08:00' }, ttl_seconds: 600 });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      object: 'session',
      name: 'worker 1',
      ttl_seconds: 600,
      clock: { mode: 'manual', speed: 1, now: '2027-01-01T00:00:00+08:00' },
      size: { accounts: 1, tasks: 0, calls: 0, deliveries: 0, bytes: 0 },
      account: { object: 'account', available: '100000.000' },
    });
    expect(res.body.id).toMatch(/^ses_[a-z0-9]{24}$/);
    expect(res.body.key).toMatch(/^sk-[A-Za-z0-9]{40}$/);
    expect(res.body.admin_token).toMatch(/^adm_[A-Za-z0-9]{32}$/);
    expect(res.body.webhook_secret).toMatch(/^whsec_/);
    expect(res.body.account.id).not.toBe('acct_demo');
    expect(res.body.key).not.toBe(DEMO_KEY);
    expect(res.body.account.webhook_secret).toBe(res.body.webhook_secret);
  });

  it('routes /v1 by the key: the session sees only its own tasks, the default world only its own', async () => {
    const s = await newSession();
    const inSession = await t.as(s.key).post('/v1/tasks', socialNote());
    expect(inSession.status).toBe(200);
    const id = inSession.body.id as string;
    expect((await t.as(s.key).get(`/v1/tasks/${id}`)).status).toBe(200);
    // The default world's key does not see it, nor its control API.
    expect((await t.api.get(`/v1/tasks/${id}`)).status).toBe(404);
    expect((await t.admin.get(`/_emulator/tasks/${id}`)).status).toBe(404);
    const own = await t.api.post('/v1/tasks', socialNote());
    expect((await t.as(s.key).get(`/v1/tasks/${own.body.id}`)).status).toBe(404);
    // The session's admin token lists its task, and only that one.
    const listed = await adminAs(s.token).get('/_emulator/tasks');
    expect(listed.body.data.map((entry: { task: { id: string } }) => entry.task.id)).toEqual([id]);
    expect((await adminAs(s.token).get('/_emulator/accounts')).body.data.map((a: { id: string }) => a.id)).toEqual([s.account]);
    expect((await adminAs(s.token).get('/_emulator/accounts/acct_demo')).status).toBe(404);
  });

  it('has a clock of its own, which only its own control calls move', async () => {
    const clock = { mode: 'manual', start_time: '2027-02-01T10:00:00+08:00' };
    const a = await newSession({ clock });
    const b = await newSession({ clock });
    const before = (await t.admin.get('/_emulator/clock')).body.now;
    const moved = await adminAs(a.token).post('/_emulator/clock/advance', { seconds: 7200 });
    expect(moved.status).toBe(200);
    expect((await t.admin.get('/_emulator/clock')).body.now).toBe(before);
    expect((await adminAs(b.token).get('/_emulator/clock')).body.now).toBe('2027-02-01T10:00:00+08:00');
    expect((await adminAs(a.token).get('/_emulator/clock')).body.now).toBe('2027-02-01T12:00:00+08:00');
    // A task of session a finishes on a's clock, b's stays where it was.
    const ta = await t.as(a.key).post('/v1/tasks', socialNote());
    const tb = await t.as(b.key).post('/v1/tasks', socialNote());
    await adminAs(a.token).post('/_emulator/clock/advance', { seconds: 3600 });
    expect((await t.as(a.key).get(`/v1/tasks/${ta.body.id}`)).body.status).toBe('succeeded');
    expect((await t.as(b.key).get(`/v1/tasks/${tb.body.id}`)).body.status).not.toBe('succeeded');
  });

  it("a session's token sees only its session: not another's, not the list, cannot make one", async () => {
    const a = await newSession();
    const b = await newSession();
    const list = await adminAs(a.token).get('/_emulator/sessions');
    expect(list.body.scope).toBe('session');
    expect(list.body.data.map((s: { id: string }) => s.id)).toEqual([a.id]);
    expect((await adminAs(a.token).get(`/_emulator/sessions/${b.id}`)).status).toBe(404);
    expect((await adminAs(a.token).send((r) => r.delete(`/_emulator/sessions/${b.id}`).set('Authorization', `Bearer ${a.token}`))).status).toBe(404);
    expect((await adminAs(a.token).post('/_emulator/sessions', {})).status).toBe(401);
    // Naming the other session does not help a session's token: it knows no other (404); its own is its own.
    const viaHeader = await adminAs(a.token, { 'X-Emulator-Session': b.id }).get('/_emulator/accounts');
    expect(viaHeader.status).toBe(404);
    const ownHeader = await adminAs(a.token, { 'X-Emulator-Session': a.id }).get('/_emulator/accounts');
    expect(ownHeader.body.data.map((x: { id: string }) => x.id)).toEqual([a.account]);
    // The emulator's token lists both, and reaches either one with the header.
    const all = await t.admin.get('/_emulator/sessions');
    expect(all.body.scope).toBe('emulator');
    expect(all.body.data.map((s: { id: string }) => s.id)).toEqual([a.id, b.id]);
    const inB = await t.admin.get('/_emulator/accounts', { 'X-Emulator-Session': b.id });
    expect(inB.body.data.map((x: { id: string }) => x.id)).toEqual([b.account]);
    const none = await t.admin.get('/_emulator/accounts', { 'X-Emulator-Session': 'ses_000000000000000000000000' });
    expect(none.status).toBe(404);
    expect(none.body.error.code).toBe('not_found');
  });

  it("a session's key is no other world's: the default admin token and another session's key do not reach it", async () => {
    const a = await newSession();
    expect((await t.admin.get(`/_emulator/keys/${a.key}`)).status).toBe(404);
    const b = await newSession();
    expect((await adminAs(b.token).get(`/_emulator/keys/${a.key}`)).status).toBe(404);
    expect((await adminAs(a.token).get(`/_emulator/keys/${a.key}`)).status).toBe(200);
  });

  it('ends on DELETE: its key and token are refused from then on, and it is off the list', async () => {
    const s = await newSession();
    expect((await t.as(s.key).get('/v1/tasks')).status).toBe(200);
    const ended = await t.admin.send((r) => r.delete(`/_emulator/sessions/${s.id}`).set('Authorization', `Bearer ${ADMIN_TOKEN}`));
    expect(ended.status).toBe(200);
    expect(ended.body).toEqual({ ok: true, id: s.id });
    expect((await t.as(s.key).get('/v1/tasks')).status).toBe(401);
    expect((await adminAs(s.token).get('/_emulator/clock')).status).toBe(401);
    expect((await t.admin.get(`/_emulator/sessions/${s.id}`)).status).toBe(404);
    expect((await t.admin.get('/_emulator/sessions')).body.data).toEqual([]);
  });

  it('refuses a malformed body with 422 invalid_params naming the field, and makes nothing', async () => {
    for (const body of [{ ttl_seconds: 0 }, { clock: { mode: 'sideways' } }, { name: '' }, { surprise: 1 }, { clock: { mode: 'manual', speed: 2 } }, { accounts: [{ points: '1' }], state: {} }]) {
      const res = await t.admin.post('/_emulator/sessions', body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.body.error.code).toBe('invalid_params');
    }
    expect((await t.admin.get('/_emulator/sessions')).body.data).toEqual([]);
  });

  it('takes accounts, scenarios and faults of its own, which no other world sees', async () => {
    const s = await newSession({
      accounts: [{ points: '50.000' }, { points: '7.500' }],
      scenarios: [{ name: 'session-only', queue_seconds: 1, outcome: 'failed', failure: { code: 'content_rejected', during: 'queued' } }],
      faults: { rules: [{ match: { path: '/v1/models' }, fault: { kind: 'error', code: 'service_unavailable' } }] },
    });
    const accounts = (await adminAs(s.token).get('/_emulator/accounts')).body.data;
    expect(accounts.map((a: { available: string }) => a.available)).toEqual(['50.000', '7.500']);
    expect((await adminAs(s.token).get('/_emulator/scenarios')).body.data.map((x: { name: string }) => x.name)).toContain('session-only');
    expect((await t.admin.get('/_emulator/scenarios')).body.data.map((x: { name: string }) => x.name)).not.toContain('session-only');
    expect((await t.as(s.key).get('/v1/models')).status).toBe(503);
    expect((await t.api.get('/v1/models')).status).toBe(200);
    expect((await t.admin.get('/_emulator/faults')).body.data).toEqual([]);
  });

  it('takes a state document, and refuses one whose key another world holds', async () => {
    const exported = (await t.admin.post('/_emulator/state/export')).body;
    const clash = await t.admin.post('/_emulator/sessions', { state: exported });
    expect(clash.status).toBe(422);
    expect(clash.body.error.details[0].field).toBe('state.keys[0].key');
    const renamed = { ...exported, keys: exported.keys.map((k: Record<string, unknown>) => ({ ...k, key: 'sk-imported-into-a-session' })) };
    const s = await newSession({ state: renamed });
    expect(s.key).toBe('sk-imported-into-a-session');
    expect(s.account).toBe('acct_demo');
    const imported = await t.as('sk-imported-into-a-session').post('/v1/tasks', socialNote());
    expect(imported.status).toBe(200);
    // Its reset imports the document again: the key stays, the task made since is gone.
    expect((await adminAs(s.token).post('/_emulator/reset')).status).toBe(200);
    expect((await t.as('sk-imported-into-a-session').get(`/v1/tasks/${imported.body.id}`)).status).toBe(404);
    expect((await t.as('sk-imported-into-a-session').get('/v1/tasks')).status).toBe(200);
    expect((await t.api.get('/v1/tasks')).status).toBe(200);
  });

  it("refuses a state import, in any world, that would bring it another world's key", async () => {
    const a = await newSession();
    const exported = (await adminAs(a.token).post('/_emulator/state/export')).body;
    // Into the default world: the session's key would then be in two worlds.
    const intoDefault = await t.admin.post('/_emulator/state/import', exported);
    expect(intoDefault.status).toBe(422);
    expect(intoDefault.body.error.details[0].field).toBe('keys[0].key');
    expect((await t.api.get('/v1/tasks')).status).toBe(200);
    // Into another session: the same.
    const b = await newSession();
    expect((await adminAs(b.token).post('/_emulator/state/import', exported)).status).toBe(422);
    // Into its own session: its own keys are its own.
    expect((await adminAs(a.token).post('/_emulator/state/import', exported)).status).toBe(200);
    expect((await t.as(a.key).get('/v1/tasks')).status).toBe(200);
    expect((await t.as(b.key).get('/v1/tasks')).status).toBe(200);
  });

  it('with a seed, repeats its account ids, secrets and task ids, but never a key another session holds', async () => {
    const body = { seed: 'ci-run-7', clock: { mode: 'manual', start_time: '2027-01-01T00:00:00+08:00' } };
    const a = await newSession(body);
    const b = await newSession(body);
    expect(b.account).toBe(a.account);
    expect(b.secret).toBe(a.secret);
    expect(b.key).not.toBe(a.key);
    const ta = await t.as(a.key).post('/v1/tasks', socialNote());
    const tb = await t.as(b.key).post('/v1/tasks', socialNote());
    expect(tb.body.id).toBe(ta.body.id);
    // The same task id in two worlds: each key reaches its own.
    await adminAs(a.token).post('/_emulator/clock/advance', { seconds: 3600 });
    expect((await t.as(a.key).get(`/v1/tasks/${ta.body.id}`)).body.status).toBe('succeeded');
    expect((await t.as(b.key).get(`/v1/tasks/${tb.body.id}`)).body.status).toBe('queued');
  });

  it("serves a session's uploaded file at its address, and no other world lists it", async () => {
    const s = await newSession();
    const uploaded = await t.as(s.key).post('/v1/files', { content: Buffer.from('session bytes').toString('base64'), filename: 'a.txt' });
    expect(uploaded.status).toBe(200);
    const path = new URL(uploaded.body.url as string).pathname;
    const served = await request(t.emulator.app).get(path);
    expect([served.status, served.text]).toEqual([200, 'session bytes']);
    const other = await t.api.post('/v1/files', { content: Buffer.from('default bytes').toString('base64'), filename: 'b.txt' });
    expect((await request(t.emulator.app).get(new URL(other.body.url as string).pathname)).text).toBe('default bytes');
    expect((await request(t.emulator.app).get('/files/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA')).status).toBe(404);
    // Ended with its session.
    await t.admin.send((r) => r.delete(`/_emulator/sessions/${s.id}`).set('Authorization', `Bearer ${ADMIN_TOKEN}`));
    expect((await request(t.emulator.app).get(path)).status).toBe(404);
  });

  it('gives every session its own verdict and call records', async () => {
    const a = await newSession();
    const b = await newSession();
    const task = await t.as(a.key).post('/v1/tasks', socialNote());
    // Polled again at once: the polling check has something to judge in a's world, and nothing in b's.
    await t.as(a.key).get(`/v1/tasks/${task.body.id}`);
    await t.as(a.key).get(`/v1/tasks/${task.body.id}`);
    const recordsA = (await adminAs(a.token).get('/_emulator/records')).body.data;
    const recordsB = (await adminAs(b.token).get('/_emulator/records')).body.data;
    expect(recordsA).toHaveLength(3);
    expect(recordsB).toHaveLength(0);
    expect((await t.admin.get('/_emulator/records')).body.data).toHaveLength(0);
    const verdictA = (await adminAs(a.token).get('/_emulator/verdict')).body;
    const verdictB = (await adminAs(b.token).get('/_emulator/verdict')).body;
    expect(verdictA.counts.not_exercised).toBeLessThan(verdictA.checks.length);
    expect(verdictB.counts).toEqual({ pass: 0, fail: 0, not_exercised: verdictB.checks.length });
    expect((await t.admin.get('/_emulator/verdict')).body.counts).toEqual(verdictB.counts);
  });
});

describe('in-process sessions', () => {
  it('createSession answers a handle with the typed control API, and dispose ends it', async () => {
    t = await startEmulator();
    const session = await t.emulator.createSession({ clock: { mode: 'manual' } });
    const submitted = await t.as(session.key).post('/v1/tasks', socialNote());
    const id = submitted.body.id as string;
    await session.control.clock.advance(3600);
    expect((await t.as(session.key).get(`/v1/tasks/${id}`)).body.status).toBe('succeeded');
    expect(session.control.tasks.list({}).data.map((x) => x.task.id)).toEqual([id]);
    expect(t.emulator.control.tasks.list({}).data).toEqual([]);
    expect(session.verdict().counts.not_exercised).toBeLessThan(session.verdict().checks.length);
    expect(t.emulator.verdict().counts.not_exercised).toBe(t.emulator.verdict().checks.length);
    session.reset();
    expect(session.control.tasks.list({}).data).toEqual([]);
    // A reset seeds the session's own account and key again, as the default world's demo key stays.
    expect((await t.as(session.key).get('/v1/tasks')).body.data).toEqual([]);
    expect(session.control.accounts.get(session.accountId)).toMatchObject({ available: '100000.000', webhook_secret: session.webhookSecret });
    await session.dispose();
    await session.dispose();
    expect((await t.admin.get('/_emulator/sessions')).body.data).toEqual([]);
  });
});

describe('an idle session', () => {
  it('ends after its time-to-live without a request, with its records; each request starts the wait again', async () => {
    const sessionsClock = createClock({ mode: 'manual', startMs: Date.parse('2026-11-23T09:00:00+08:00') });
    t = await startEmulator({ sessionsClock });
    const s = await newSession({ ttl_seconds: 60 });
    await sessionsClock.advance(50_000);
    expect((await t.as(s.key).get('/v1/tasks')).status).toBe(200);
    await sessionsClock.advance(50_000);
    // The dashboard watching it is not a use.
    expect((await adminAs(s.token, { 'X-Emulator-Client': 'dashboard' }).get('/_emulator/tasks')).status).toBe(200);
    const listed = (await t.admin.get(`/_emulator/sessions/${s.id}`)).body;
    expect(listed.last_used_at).toBe('2026-11-23T09:00:50+08:00');
    expect(listed.expires_at).toBe('2026-11-23T09:01:50+08:00');
    await sessionsClock.advance(11_000);
    expect((await t.admin.get(`/_emulator/sessions/${s.id}`)).status).toBe(404);
    expect((await t.as(s.key).get('/v1/tasks')).status).toBe(401);
  });
});
