import { Webhook } from 'standardwebhooks';
import { afterEach, expect, it } from 'vitest';
import { newAccount, socialNote, startEmulator } from '../support/harness.ts';
import type { ApiClient, TestEmulator } from '../support/harness.ts';
import { failFirst, startReceiver } from '../support/receiver.ts';
import type { Answer, Receiver } from '../support/receiver.ts';

// What the dashboard reads from the control API beyond the plain lists: pages of every list, rows left out when
// the client already holds their version (`known`), the ledger from an entry on (`after`, `limit`), one task and
// one callback message by id, the messages needing attention first, and the headers each attempt sent.

let t: TestEmulator;
let receiver: Receiver | undefined;
afterEach(async () => {
  await t.close();
  await receiver?.close();
  receiver = undefined;
});

const start = async (options: Parameters<typeof startEmulator>[0] = {}): Promise<TestEmulator> => (t = await startEmulator(options));

/** An account whose callbacks go to a local receiver answering as `answer` says. */
async function calledBack(answer?: Answer): Promise<{ id: string; key: string; secret: string; api: ApiClient }> {
  receiver = await startReceiver(answer);
  await start({ allowInsecureWebhooks: true, webhookTimeoutMs: 300 });
  const account = await newAccount(t, '10000.000');
  const set = await t.admin.post(`/_emulator/accounts/${account.id}/webhook`, { url: receiver.url });
  return { ...account, secret: set.body.webhook_secret as string, api: t.as(account.key) };
}

const submit = async (api: ApiClient, scenario = 'instant'): Promise<string> =>
  (await api.post('/v1/tasks', socialNote(), { 'X-Emulator-Scenario': scenario })).body.id as string;
const advance = (seconds: number) => t.admin.post('/_emulator/clock/advance', { seconds });

/**
 * Two tasks whose messages went out around a webhook secret rotation: `before` it (one secret signs) and
 * `during` the overlap a minute after it (both sign).
 */
async function acrossRotation(): Promise<{ account: Awaited<ReturnType<typeof calledBack>>; before: string; during: string }> {
  const account = await calledBack();
  const before = await submit(account.api);
  await advance(0);
  await advance(60);
  await t.admin.post(`/_emulator/accounts/${account.id}/webhook/rotate`);
  await advance(60);
  const during = await submit(account.api);
  await advance(0);
  return { account, before, during };
}

/** The 422 every bad query parameter gets: invalid_params naming the parameter, with the request id. */
async function expectInvalid(path: string, field: string): Promise<void> {
  const res = await t.admin.get(path);
  expect(res.status, path).toBe(422);
  expect(res.body.error, path).toMatchObject({ code: 'invalid_params', request_id: res.headers['x-request-id'] });
  expect(new Set(res.body.error.details.map((d: { field: string }) => d.field)), path).toEqual(new Set([field]));
}

it('pages the tasks of every account, newest first, with has_more and a version per task', async () => {
  await start();
  const ids = [];
  for (let i = 0; i < 3; i += 1) ids.push((await t.api.post('/v1/tasks', socialNote())).body.id as string);
  const first = await t.admin.get('/_emulator/tasks?limit=2');
  expect(first.body).toMatchObject({ page: 1, limit: 2, has_more: true });
  expect(first.body.data.map((e: { task: { id: string } }) => e.task.id)).toEqual([ids[2], ids[1]]);
  expect(first.body.versions).toEqual([expect.stringMatching(/^[A-Za-z0-9_-]{12}$/), expect.stringMatching(/^[A-Za-z0-9_-]{12}$/)]);
  const second = await t.admin.get('/_emulator/tasks?limit=2&page=2');
  expect(second.body).toMatchObject({ page: 2, limit: 2, has_more: false });
  expect(second.body.data.map((e: { task: { id: string } }) => e.task.id)).toEqual([ids[0]]);
});

it('leaves out the tasks whose versions the client holds, and sends a task again once it changed', async () => {
  await start();
  const older = (await t.api.post('/v1/tasks', socialNote())).body.id as string;
  const newer = (await t.api.post('/v1/tasks', socialNote())).body.id as string;
  const read = await t.admin.get('/_emulator/tasks');
  const known = (read.body.versions as string[]).join(',');

  const quiet = await t.admin.get(`/_emulator/tasks?known=${known}`);
  expect(quiet.body.data).toEqual([]);
  expect(quiet.body.versions).toEqual(read.body.versions);

  await t.admin.post(`/_emulator/tasks/${older}/fail`, { code: 'generation_failed' });
  const third = (await t.api.post('/v1/tasks', socialNote())).body.id as string;
  const changed = await t.admin.get(`/_emulator/tasks?known=${known}`);
  // The new task and the failed one, in page order; the unchanged one only as its version, in its place.
  expect(changed.body.data.map((e: { task: { id: string; status: string } }) => [e.task.id, e.task.status])).toEqual([
    [third, 'queued'],
    [older, 'failed'],
  ]);
  expect(changed.body.versions).toHaveLength(3);
  expect(changed.body.versions[1]).toBe(read.body.versions[0]);
  expect(read.body.data[0].task.id).toBe(newer);
});

it.each([
  ['page 0', '/_emulator/tasks?page=0', 'page'],
  ['a page that is not a number', '/_emulator/tasks?page=two', 'page'],
  ['a known list that is not versions', '/_emulator/tasks?known=abc', 'known'],
  ['more than 200 known versions', `/_emulator/tasks?known=${Array(201).fill('AAAAAAAAAAAA').join(',')}`, 'known'],
  ['accounts: limit 0', '/_emulator/accounts?limit=0', 'limit'],
  ['accounts: page -1', '/_emulator/accounts?page=-1', 'page'],
  ['accounts: a bad known list', '/_emulator/accounts?known=a,,b', 'known'],
  ['records: a bad known list', '/_emulator/records?known=%20', 'known'],
  ['deliveries: an unknown order', '/_emulator/webhooks/deliveries?order=random', 'order'],
  ['deliveries: an unknown state', '/_emulator/webhooks/deliveries?status=lost', 'status'],
  ['deliveries: limit 1001', '/_emulator/webhooks/deliveries?limit=1001', 'limit'],
  ['deliveries: page 0', '/_emulator/webhooks/deliveries?page=0', 'page'],
  ['deliveries: a bad known list', '/_emulator/webhooks/deliveries?known=!!!!!!!!!!!!', 'known'],
  ['ledger: after -1', '/_emulator/accounts/acct_demo/ledger?after=-1', 'after'],
  ['ledger: after that is not a number', '/_emulator/accounts/acct_demo/ledger?after=last', 'after'],
  ['ledger: limit 1001', '/_emulator/accounts/acct_demo/ledger?limit=1001', 'limit'],
  ['ledger: a fractional limit', '/_emulator/accounts/acct_demo/ledger?limit=1.5', 'limit'],
])('refuses %s: 422 invalid_params naming the parameter', async (_name, path, field) => {
  await start();
  await expectInvalid(path, field);
});

it('reads one task of any account with its scenario, callback address and key', async () => {
  await start();
  const other = await newAccount(t);
  const submitted = await t.as(other.key).post('/v1/tasks', { ...socialNote(), webhook_url: 'https://hooks.example.com/t' }, { 'X-Emulator-Scenario': 'slow' });
  const res = await t.admin.get(`/_emulator/tasks/${submitted.body.id}`);
  expect(res.status).toBe(200);
  expect(res.body).toEqual({
    account_id: other.id,
    scenario: 'slow',
    task: submitted.body,
    webhook_url: 'https://hooks.example.com/t',
    key: other.key,
  });
  const missing = await t.admin.get('/_emulator/tasks/T000000000000nope');
  expect(missing.status).toBe(404);
  expect(missing.body.error).toMatchObject({ code: 'not_found', request_id: missing.headers['x-request-id'] });
});

it('pages the accounts, oldest first, and leaves out the ones the client holds', async () => {
  await start();
  const second = await newAccount(t);
  const third = await newAccount(t);
  const all = await t.admin.get('/_emulator/accounts');
  expect(all.body).toMatchObject({ page: 1, limit: null, has_more: false });
  expect(all.body.data.map((a: { id: string }) => a.id)).toEqual(['acct_demo', second.id, third.id]);
  const page = await t.admin.get('/_emulator/accounts?limit=2&page=2');
  expect(page.body).toMatchObject({ page: 2, limit: 2, has_more: false });
  expect(page.body.data.map((a: { id: string }) => a.id)).toEqual([third.id]);

  await t.as(second.key).post('/v1/tasks', socialNote());
  const changed = await t.admin.get(`/_emulator/accounts?known=${all.body.versions.join(',')}`);
  expect(changed.body.data).toEqual([expect.objectContaining({ id: second.id, frozen: '40.000' })]);
  expect(changed.body.versions).toEqual([all.body.versions[0], expect.not.stringMatching(all.body.versions[1]), all.body.versions[2]]);
});

it('reads a ledger from an entry number on, with the count of entries and whether more follow', async () => {
  await start();
  for (let i = 0; i < 3; i += 1) await t.api.post('/v1/tasks', socialNote());
  // fund, then a freeze per task: four entries numbered 1 to 4.
  const all = await t.admin.get('/_emulator/accounts/acct_demo/ledger');
  expect(all.body).toMatchObject({ count: 4, has_more: false });
  expect(all.body.data.map((e: { n: number; kind: string }) => [e.n, e.kind])).toEqual([
    [1, 'fund'],
    [2, 'freeze'],
    [3, 'freeze'],
    [4, 'freeze'],
  ]);

  const countOnly = await t.admin.get('/_emulator/accounts/acct_demo/ledger?limit=0');
  expect(countOnly.body).toEqual({ object: 'list', data: [], count: 4, has_more: true });
  const middle = await t.admin.get('/_emulator/accounts/acct_demo/ledger?after=1&limit=2');
  expect(middle.body).toMatchObject({ count: 4, has_more: true });
  expect(middle.body.data).toEqual(all.body.data.slice(1, 3));
  const rest = await t.admin.get('/_emulator/accounts/acct_demo/ledger?after=3');
  expect(rest.body).toMatchObject({ data: all.body.data.slice(3), count: 4, has_more: false });
  const past = await t.admin.get('/_emulator/accounts/acct_demo/ledger?after=4&limit=10');
  expect(past.body).toMatchObject({ data: [], count: 4, has_more: false });

  // A poll after one more task reads that one entry only.
  await t.api.post('/v1/tasks', socialNote());
  const next = await t.admin.get('/_emulator/accounts/acct_demo/ledger?after=4&limit=10');
  expect(next.body.data.map((e: { n: number; kind: string }) => [e.n, e.kind])).toEqual([[5, 'freeze']]);
  expect(next.body.count).toBe(5);
});

it("counts a long ledger's entries exactly", async () => {
  await start();
  for (let i = 0; i < 20; i += 1) await t.api.post('/v1/tasks', socialNote());
  const res = await t.admin.get('/_emulator/accounts/acct_demo/ledger?after=17&limit=1');
  expect(res.body).toMatchObject({ count: 21, has_more: true });
  expect(res.body.data.map((e: { n: number }) => e.n)).toEqual([18]);
  expect((await t.admin.get('/_emulator/accounts/acct_demo/ledger')).body.data).toHaveLength(21);
});

it('answers 404 not_found for the ledger of an account that does not exist, whatever the paging', async () => {
  await start();
  const res = await t.admin.get('/_emulator/accounts/acct_nope/ledger?after=1&limit=5');
  expect(res.status).toBe(404);
  expect(res.body.error.code).toBe('not_found');
});

it('leaves out the call records the client holds', async () => {
  await start();
  await t.api.get('/v1/tasks');
  const read = await t.admin.get('/_emulator/records');
  expect(read.body.versions).toHaveLength(1);
  await t.api.get('/v1/models');
  const next = await t.admin.get(`/_emulator/records?known=${read.body.versions.join(',')}`);
  expect(next.body.data.map((r: { path: string }) => r.path)).toEqual(['/v1/models']);
  expect(next.body.versions).toEqual([expect.any(String), read.body.versions[0]]);
});

it('lists every message oldest first without a limit, as the listing always has', async () => {
  const account = await calledBack();
  const ids = [];
  for (let i = 0; i < 3; i += 1) {
    ids.push(await submit(account.api));
    await advance(0);
  }
  const all = await t.admin.get('/_emulator/webhooks/deliveries');
  expect(all.body.data.map((d: { task_id: string }) => d.task_id)).toEqual(ids);
  expect(all.body).toMatchObject({ page: 1, limit: null, has_more: false });
  const oldest = await t.admin.get('/_emulator/webhooks/deliveries?limit=2&page=2');
  expect(oldest.body.data.map((d: { task_id: string }) => d.task_id)).toEqual([ids[2]]);
});

it('pages and filters the messages by state, newest first or needing attention first', async () => {
  // Only the first message's attempts fail; it stays pending with a retry due.
  const account = await calledBack((n, res) => void res.writeHead(n === 0 ? 503 : 200).end(n === 0 ? 'busy' : 'ok'));
  const failing = await submit(account.api);
  await advance(0);
  const fine = [];
  for (let i = 0; i < 3; i += 1) {
    fine.push(await submit(account.api));
    await advance(0);
  }
  const attention = await t.admin.get('/_emulator/webhooks/deliveries?order=attention&limit=2');
  expect(attention.body).toMatchObject({ page: 1, limit: 2, has_more: true });
  expect(attention.body.data.map((d: { task_id: string; status: string }) => [d.task_id, d.status])).toEqual([
    [failing, 'pending'],
    [fine[2], 'delivered'],
  ]);
  const next = await t.admin.get('/_emulator/webhooks/deliveries?order=attention&limit=2&page=2');
  expect(next.body).toMatchObject({ page: 2, has_more: false });
  expect(next.body.data.map((d: { task_id: string }) => d.task_id)).toEqual([fine[1], fine[0]]);

  const newest = await t.admin.get('/_emulator/webhooks/deliveries?order=newest&limit=1');
  expect(newest.body.data.map((d: { task_id: string }) => d.task_id)).toEqual([fine[2]]);
  const pending = await t.admin.get('/_emulator/webhooks/deliveries?status=pending');
  expect(pending.body.data.map((d: { task_id: string }) => d.task_id)).toEqual([failing]);
  expect(pending.body.data[0]).toMatchObject({ next_attempt_at: '2026-11-23T09:01:00+08:00', attempts: [expect.objectContaining({ status_code: 503 })] });

  // A poll that holds them all reads only the message whose retry has since succeeded.
  const held = await t.admin.get('/_emulator/webhooks/deliveries?order=attention&limit=10');
  await advance(60);
  const after = await t.admin.get(`/_emulator/webhooks/deliveries?order=attention&limit=10&known=${held.body.versions.join(',')}`);
  expect(after.body.data.map((d: { task_id: string; status: string }) => [d.task_id, d.status])).toEqual([[failing, 'delivered']]);
});

it('reads one message by id, and answers 404 not_found for one that does not exist', async () => {
  const account = await calledBack();
  const id = await submit(account.api);
  await advance(0);
  const [listed] = (await t.admin.get(`/_emulator/webhooks/deliveries?task_id=${id}`)).body.data;
  const res = await t.admin.get(`/_emulator/webhooks/deliveries/${listed.id}`);
  expect(res.status).toBe(200);
  expect(res.body).toEqual(listed);
  const missing = await t.admin.get('/_emulator/webhooks/deliveries/msg_nope');
  expect(missing.status).toBe(404);
  expect(missing.body.error).toMatchObject({ code: 'not_found', request_id: missing.headers['x-request-id'] });
});

it('shows each attempt with the headers it sent, the signature the same as the receiver got and could verify', async () => {
  const account = await calledBack(failFirst(1, 500));
  const id = await submit(account.api);
  await advance(0);
  await advance(60);
  const [message] = (await t.admin.get(`/_emulator/webhooks/deliveries?task_id=${id}`)).body.data;
  expect(message.attempts).toHaveLength(2);
  expect(receiver?.received).toHaveLength(2);
  for (const [i, attempt] of (message.attempts as { request_headers: Record<string, string> }[]).entries()) {
    const got = receiver?.received[i];
    expect(attempt.request_headers).toEqual({
      'Content-Type': 'application/json',
      'User-Agent': 'Svc-Webhook/1.0',
      'webhook-id': got?.headers['webhook-id'],
      'webhook-timestamp': got?.headers['webhook-timestamp'],
      'webhook-signature': got?.headers['webhook-signature'],
    });
    expect(got?.raw.toString('utf8')).toBe(message.body);
    expect(() => new Webhook(account.secret).verify(message.body, attempt.request_headers)).not.toThrow();
  }
});

it('keeps the signature each attempt sent through rotations: one secret before, both during the overlap', async () => {
  const { account, before, during } = await acrossRotation();
  // A day later, a second rotation: the first secret is forgotten, the second one is rotated out in turn.
  await advance(25 * 3600);
  await t.admin.post(`/_emulator/accounts/${account.id}/webhook/rotate`);

  const sent = receiver?.received ?? [];
  expect(sent).toHaveLength(2);
  for (const [i, taskId] of [before, during].entries()) {
    const [message] = (await t.admin.get(`/_emulator/webhooks/deliveries?task_id=${taskId}`)).body.data;
    expect(message.attempts[0].request_headers['webhook-signature']).toBe(sent[i]?.headers['webhook-signature']);
    expect(message.attempts[0]).not.toHaveProperty('webhook_signature');
  }
  expect(String(sent[0]?.headers['webhook-signature']).split(' ')).toHaveLength(1);
  expect(String(sent[1]?.headers['webhook-signature']).split(' ')).toHaveLength(2);
});

it('recomputes the signature of an attempt recorded without one from the secrets of its time', async () => {
  const { account, before, during } = await acrossRotation();
  // As an older emulator stored them: attempts without their signature.
  const { db } = t.emulator.internals;
  db.store.transaction(() => {
    for (const message of db.deliveries.list({ accountId: account.id }, 10, 0).rows) {
      db.deliveries.put({ ...message, attempts: message.attempts.map(({ webhook_signature: _dropped, ...attempt }) => attempt) });
    }
  });
  const sent = receiver?.received ?? [];
  for (const [i, taskId] of [before, during].entries()) {
    const [message] = (await t.admin.get(`/_emulator/webhooks/deliveries?task_id=${taskId}`)).body.data;
    expect(message.attempts[0].request_headers['webhook-signature']).toBe(sent[i]?.headers['webhook-signature']);
  }
});

it("names the call of a text call's ledger entries, whose record the control API reads", async () => {
  await start();
  const chat = await t.api.post('/v1/chat/completions', { model: 'svc-text-pro', messages: [{ role: 'user', content: 'Hi' }] });
  const requestId = chat.headers['x-request-id'] as string;
  const ledger = (await t.admin.get('/_emulator/accounts/acct_demo/ledger')).body.data as { kind: string; call_id?: string; task_id: string | null }[];
  const ofCall = ledger.filter((e) => e.call_id !== undefined);
  expect(ofCall.map((e) => e.kind)).toEqual(['freeze', 'charge', 'refund']);
  expect(new Set(ofCall.map((e) => e.call_id))).toEqual(new Set([requestId]));
  expect(ofCall.every((e) => e.task_id === null)).toBe(true);
  expect((await t.admin.get(`/_emulator/records/${requestId}`)).body).toMatchObject({ path: '/v1/chat/completions', status: 200 });
});

it("shows an account's webhook secret, as setting its callback address answered it", async () => {
  const account = await calledBack();
  const listed = (await t.admin.get('/_emulator/accounts')).body.data.find((a: { id: string }) => a.id === account.id);
  expect(listed.webhook_secret).toBe(account.secret);
  expect(listed.webhook_secret).toMatch(/^whsec_/);
});
