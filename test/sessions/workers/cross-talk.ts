import { existsSync, readFileSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { failFirst, startReceiver } from '../../support/receiver.ts';
import type { Receiver } from '../../support/receiver.ts';

// One of the parallel workers of test/sessions/parallel-workers.test.ts: its own session on the one emulator that
// test started, hours of its own virtual time (a timeout, six callback attempts, a rate window), then every way to
// see or touch the other workers' sessions, each of which must answer 404 or 401.

const BASE = process.env['SESSIONS_BASE'] ?? '';
const ADMIN = process.env['SESSIONS_ADMIN'] ?? '';
const EXCHANGE = process.env['SESSIONS_EXCHANGE'] ?? '';
const WORKERS = Number(process.env['SESSIONS_WORKERS'] ?? '0');
const START = '2027-05-01T10:00:00+08:00';
const NOTE = { model: 'social-notes-data', input: { mode: 'note', note: 'https://notes.example.com/n/7', agree: true } };

// Answers are read as the test expects them; a wrong shape fails the expectation that reads it.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

interface Mine {
  worker: number;
  id: string;
  key: string;
  token: string;
  account: string;
  tasks: string[];
  messages: string[];
  requests: string[];
}

async function call(token: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${BASE}${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

/** Waits (real time, bounded) until every worker has written what it holds. */
async function others(self: number): Promise<Mine[]> {
  const until = performance.now() + 60_000;
  for (;;) {
    const files = readdirSync(EXCHANGE).filter((f) => f.endsWith('.json'));
    if (files.length >= WORKERS) return files.map((f) => JSON.parse(readFileSync(join(EXCHANGE, f), 'utf8')) as Mine).filter((o) => o.worker !== self);
    if (performance.now() > until) throw new Error(`only ${files.length} of ${WORKERS} workers wrote what they hold`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export function crossTalk(worker: number): void {
  let receiver: Receiver;
  let mine: Mine;
  let secret = '';
  // Requests this worker sent with its own key: each must be in its records, and nothing else.
  let ownRequests = 0;
  const api = async (method: string, path: string, body?: unknown, headers?: Record<string, string>) => {
    ownRequests += 1;
    return call(mine.key, method, path, body, headers);
  };
  const control = (method: string, path: string, body?: unknown, headers?: Record<string, string>) => call(mine.token, method, path, body, headers);

  beforeAll(async () => {
    expect(existsSync(EXCHANGE), 'SESSIONS_EXCHANGE').toBe(true);
    receiver = await startReceiver(failFirst(1000));
    const made = await call(ADMIN, 'POST', '/_emulator/sessions', { name: `worker ${worker}`, clock: { mode: 'manual', start_time: START }, accounts: [{ points: '1000.000', webhook_url: receiver.url }] });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    mine = { worker, id: made.body.id, key: made.body.key, token: made.body.admin_token, account: made.body.account.id, tasks: [], messages: [], requests: [] };
    secret = made.body.webhook_secret;
  });
  afterAll(async () => {
    if (mine) expect((await control('DELETE', `/_emulator/sessions/${mine.id}`)).status).toBe(200);
    await receiver?.close();
  });

  it(`worker ${worker}: lives hours of its own virtual time, and sees nothing of the other sessions`, async () => {
    // A rate window on its own clock: three requests a minute.
    expect((await control('PATCH', `/_emulator/keys/${mine.key}`, { rpm: 3 })).status).toBe(200);
    const done = await api('POST', '/v1/tasks', NOTE);
    const timedOut = await api('POST', '/v1/tasks', NOTE, { 'X-Emulator-Scenario': 'timeout' });
    expect([done.status, timedOut.status]).toEqual([200, 200]);
    mine.tasks = [done.body.id, timedOut.body.id];
    expect((await api('GET', '/v1/tasks')).status).toBe(200);
    expect((await api('GET', '/v1/tasks')).status).toBe(429);
    expect((await control('POST', '/_emulator/clock/advance', { seconds: 60 })).status).toBe(200);
    expect((await api('GET', `/v1/tasks/${mine.tasks[0]}`)).status).toBe(200);
    expect((await control('PATCH', `/_emulator/keys/${mine.key}`, { rpm: null })).status).toBe(200);
    // Nine hours in three jumps: the timeout, then every retry of both callbacks against a failing receiver.
    for (let i = 0; i < 3; i++) expect((await control('POST', '/_emulator/clock/advance', { seconds: 3 * 3600 })).status).toBe(200);
    expect((await control('GET', '/_emulator/clock')).body.now).toBe('2027-05-01T19:01:00+08:00');
    expect((await api('GET', `/v1/tasks/${mine.tasks[0]}`)).body.status).toBe('succeeded');
    const failed = (await api('GET', `/v1/tasks/${mine.tasks[1]}`)).body;
    expect([failed.status, failed.error?.code]).toEqual(['failed', 'timeout']);
    const deliveries = (await control('GET', '/_emulator/webhooks/deliveries')).body.data as { id: string; attempts: unknown[]; task_id: string }[];
    expect(deliveries.map((d) => [d.task_id, d.attempts.length]).sort()).toEqual(mine.tasks.map((t) => [t, 6]).sort());
    mine.messages = deliveries.map((d) => d.id);
    // Each attempt reached this worker's receiver, signed with this session's secret (checked independently).
    expect(receiver.received).toHaveLength(12);
    const wh = new Webhook(secret);
    for (const got of receiver.received) {
      const headers = { 'webhook-id': String(got.headers['webhook-id']), 'webhook-timestamp': String(got.headers['webhook-timestamp']), 'webhook-signature': String(got.headers['webhook-signature']) };
      const payload = wh.verify(got.raw.toString(), headers) as { data: { id: string } };
      expect(mine.tasks).toContain(payload.data.id);
    }
    const records = (await control('GET', '/_emulator/records?limit=1000')).body.data as { request_id: string }[];
    mine.requests = records.map((r) => r.request_id);
    // Written under another name and renamed: a worker listing the folder never reads half a file.
    writeFileSync(join(EXCHANGE, `w${worker}.part`), JSON.stringify(mine));
    renameSync(join(EXCHANGE, `w${worker}.part`), join(EXCHANGE, `w${worker}.json`));

    const seen: string[] = [];
    const expectRefused = async (what: string, reply: Promise<{ status: number }>): Promise<void> => {
      const { status } = await reply;
      if (status !== 404 && status !== 401) seen.push(`${what}: ${status}`);
    };
    for (const o of await others(worker)) {
      await expectRefused(`their task ${o.tasks[0]}`, api('GET', `/v1/tasks/${o.tasks[0]}`));
      await expectRefused('cancel their task', api('POST', `/v1/tasks/${o.tasks[1]}/cancel`));
      await expectRefused('their task, control API', control('GET', `/_emulator/tasks/${o.tasks[0]}`));
      await expectRefused('complete their task', control('POST', `/_emulator/tasks/${o.tasks[0]}/complete`, {}));
      await expectRefused('their message', control('GET', `/_emulator/webhooks/deliveries/${o.messages[0]}`));
      await expectRefused('resend their message', control('POST', `/_emulator/webhooks/deliveries/${o.messages[0]}/resend`));
      await expectRefused('their record', control('GET', `/_emulator/records/${o.requests[0]}`));
      await expectRefused('their account', control('GET', `/_emulator/accounts/${o.account}`));
      await expectRefused('their account ledger', control('GET', `/_emulator/accounts/${o.account}/ledger`));
      await expectRefused('a key on their account', control('POST', `/_emulator/accounts/${o.account}/keys`, {}));
      await expectRefused('their key, control API', control('GET', `/_emulator/keys/${o.key}`));
      await expectRefused('their verdict', control('GET', `/_emulator/verdict?key=${o.key}`));
      await expectRefused('their session', control('GET', `/_emulator/sessions/${o.id}`));
      await expectRefused('end their session', control('DELETE', `/_emulator/sessions/${o.id}`));
      await expectRefused('their world by name', control('GET', '/_emulator/clock', undefined, { 'X-Emulator-Session': o.id }));
      await expectRefused('advance their clock by name', control('POST', '/_emulator/clock/advance', { seconds: 3600 }, { 'X-Emulator-Session': o.id }));
      await expectRefused('their admin token as a key', call(o.token, 'GET', '/v1/tasks'));
      await expectRefused('their key as an admin token', call(o.key, 'GET', '/_emulator/clock'));
    }
    expect(seen).toEqual([]);
    // Its own world is as it left it: its list, its sessions, its clock (nobody else's advance moved it).
    const list = (await api('GET', '/v1/tasks')).body.data as { id: string }[];
    expect(list.map((t) => t.id).sort()).toEqual([...mine.tasks].sort());
    expect((await control('GET', '/_emulator/sessions')).body.data.map((s: { id: string }) => s.id)).toEqual([mine.id]);
    expect((await control('GET', '/_emulator/clock')).body.now).toBe('2027-05-01T19:01:00+08:00');
    const after = (await control('GET', '/_emulator/records?limit=1000')).body;
    expect(after.data.length).toBe(ownRequests);
    expect((await control('GET', '/_emulator/webhooks/deliveries')).body.data).toHaveLength(2);
  });
}
