import { expect, it } from 'vitest';
import { signRequest } from '../../src/keys/index.ts';
import { adminOf, crashWorkspace, expectStatus, kill9, startOn } from './emulator-process.ts';
import type { CliEmulator } from './emulator-process.ts';

// A signed request replayed after a restart of the real CLI on its store file, the very same bytes and headers
// inside their timestamp's window: refused as before the restart, after a kill -9 as after a SIGTERM. The nonces
// lived in the process once, so a replay after a restart created a second task and froze its points again.

const ws = crashWorkspace('signed-replay');

interface Sent {
  method: 'GET' | 'POST';
  path: string;
  body: string | undefined;
  headers: Record<string, string>;
}

/** A request of `key` signed over exactly these bytes, as sent and sent again. */
function signed(key: string, secret: string, method: Sent['method'], path: string, body?: string): Sent {
  const headers = {
    Authorization: `Bearer ${key}`,
    ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    ...signRequest({ secret, method, path, ...(body === undefined ? {} : { body }) }),
  };
  return { method, path, body, headers };
}

async function send(cli: CliEmulator, sent: Sent): Promise<{ status: number; body: { id?: string; error?: { code?: string } } }> {
  const res = await fetch(`${cli.base}${sent.path}`, {
    method: sent.method,
    headers: sent.headers,
    ...(sent.body === undefined ? {} : { body: sent.body }),
    signal: AbortSignal.timeout(15_000),
  });
  return { status: res.status, body: (await res.json()) as { id?: string; error?: { code?: string } } };
}

/** What a replay must leave as it was: the account's balances and its tasks. */
async function accountState(cli: CliEmulator, id: string): Promise<unknown> {
  const admin = adminOf(cli);
  const { available, frozen, charged } = expectStatus<Record<string, string>>(await admin.get(`/_emulator/accounts/${id}`), 200, 'account');
  const tasks = expectStatus<{ data: { task: { id: string } }[] }>(await admin.get(`/_emulator/tasks?account=${id}&limit=100`), 200, 'tasks');
  return { available, frozen, charged, tasks: tasks.data.map((entry) => entry.task.id) };
}

it('refuses a signed submit, text call and task query replayed after a kill -9 and after a SIGTERM, and freezes nothing', { timeout: 60_000 }, async () => {
  let cli = await startOn(ws.db);
  const admin = adminOf(cli);
  const account = expectStatus<{ id: string }>(await admin.post('/_emulator/accounts', { points: '1000.000' }), 201, 'create account');
  const key = expectStatus<{ key: string; signing_secret: string }>(
    await admin.post(`/_emulator/accounts/${account.id}/keys`, { signing: true }),
    201,
    'create signing key',
  );
  const sign = (method: Sent['method'], path: string, body?: string): Sent => signed(key.key, key.signing_secret, method, path, body);

  const submit = sign('POST', '/v1/tasks', JSON.stringify({ model: 'social-notes-data', input: { mode: 'note', note: 'https://notes.example.com/n/1', agree: true } }));
  const submitted = await send(cli, submit);
  expect(submitted.status).toBe(200);
  const text = sign('POST', '/v1/chat/completions', JSON.stringify({ model: 'svc-text-lite', messages: [{ role: 'user', content: 'Say hello.' }] }));
  expect((await send(cli, text)).status).toBe(200);
  // Last before the kill: a read, which writes nothing of its own for its nonce to go with.
  const query = sign('GET', `/v1/tasks/${submitted.body.id}`);
  expect((await send(cli, query)).status).toBe(200);
  const before = await accountState(cli, account.id);
  expect(before).toMatchObject({ frozen: expect.not.stringMatching(/^0\.000$/), tasks: [submitted.body.id] });

  for (const stop of ['kill -9', 'SIGTERM'] as const) {
    if (stop === 'kill -9') {
      await kill9(cli);
    } else {
      cli.child.kill('SIGTERM');
      expect(await cli.exited).toBe(0);
    }
    cli = await startOn(ws.db);
    for (const [what, sent] of [['submit', submit], ['text call', text], ['task query', query]] as const) {
      const replay = await send(cli, sent);
      expect([stop, what, replay.status, replay.body.error?.code]).toEqual([stop, what, 401, 'nonce_reused']);
    }
    expect(await accountState(cli, account.id)).toEqual(before);
  }
  // The key still works with a nonce of its own.
  expect((await send(cli, sign('GET', '/v1/tasks?limit=1'))).status).toBe(200);
});
