import type { Response } from 'supertest';
import { socialNote, startEmulator } from '../../support/harness.ts';
import type { TestEmulator } from '../../support/harness.ts';
import { ADMIN, PUBLIC_URL } from './documents.ts';
import { open, servers } from './exchange.ts';
import type { Verb, World } from './exchange.ts';

// A world per property: an emulator of its own (in memory, manual clock, no DNS, no network) with ids to aim at

/** A setup request: an answer other than 2xx breaks the setup (it is no finding). */
export async function call(t: TestEmulator, method: Verb, path: string, headers: Record<string, string>, body?: unknown): Promise<Response> {
  const test = open(t.emulator.app, method, path).set(headers);
  const res = await (body === undefined ? test : test.send(body as object));
  if (res.status >= 300) throw new Error(`setup ${method} ${path} → ${res.status} ${res.text}`);
  return res;
}

/** The text endpoints' body limit in the fuzz world (every other JSON endpoint keeps the 1 MB default). */
export const TEXT_BODY_LIMIT = 1536 * 1024;

/** A fresh emulator with two accounts and their keys, tasks, files and a callback message to aim at. */
export async function world(options: { signing?: boolean } = {}): Promise<World & { signingKey?: { key: string; secret: string } }> {
  const logs: string[] = [];
  const t = await startEmulator({
    publicUrl: PUBLIC_URL,
    // The text endpoints' own limit, lowered from 20 MB so that sizes around it stay cheap to send.
    textBodyLimit: TEXT_BODY_LIMIT,
    log: (message) => void logs.push(message),
    resolveHost: () => Promise.resolve([]),
    send: () => Promise.resolve({ status: 200, excerpt: 'ok' }),
  });
  await t.emulator.listen(0);
  if (t.emulator.server) servers.set(t.emulator.app, t.emulator.server);
  const a = (await call(t, 'POST', '/_emulator/accounts', ADMIN, { points: '999999999999.000' })).body as { id: string };
  const keyA = ((await call(t, 'POST', `/_emulator/accounts/${a.id}/keys`, ADMIN, {})).body as { key: string }).key;
  const b = (await call(t, 'POST', '/_emulator/accounts', ADMIN, {})).body as { id: string };
  const keyB = ((await call(t, 'POST', `/_emulator/accounts/${b.id}/keys`, ADMIN, {})).body as { key: string }).key;
  await call(t, 'POST', `/_emulator/accounts/${a.id}/webhook`, ADMIN, { url: 'https://hooks.example.com/a' });
  const asA = { Authorization: `Bearer ${keyA}` };
  const ownTasks: string[] = [];
  for (let i = 0; i < 4; i++) ownTasks.push(((await call(t, 'POST', '/v1/tasks', asA, socialNote())).body as { id: string }).id);
  const foreign = await call(t, 'POST', '/v1/tasks', { Authorization: `Bearer ${keyB}` }, socialNote());
  const upload = { content: Buffer.from('not really a picture').toString('base64'), filename: 'a.png' };
  const fileOf = (res: Response) => {
    const body = res.body as { id: string; url: string };
    return { id: body.id, name: body.url.slice(body.url.lastIndexOf('/') + 1) };
  };
  const ownFile = fileOf(await call(t, 'POST', '/v1/files', asA, upload));
  const foreignFile = fileOf(await call(t, 'POST', '/v1/files', { Authorization: `Bearer ${keyB}` }, upload));
  // One finished task, so a callback message exists to resend.
  await call(t, 'POST', `/_emulator/tasks/${ownTasks[3] ?? ''}/complete`, ADMIN, {});
  await call(t, 'POST', '/_emulator/clock/advance', ADMIN, { seconds: 0 });
  const deliveries = (await call(t, 'GET', '/_emulator/webhooks/deliveries', ADMIN)).body as { data: { id: string }[] };
  let signingKey: { key: string; secret: string } | undefined;
  if (options.signing) {
    const created = (await call(t, 'POST', `/_emulator/accounts/${a.id}/keys`, ADMIN, { signing: true })).body as { key: string; signing_secret: string };
    signingKey = { key: created.key, secret: created.signing_secret };
  }
  return {
    t,
    logs,
    accountA: a.id,
    keyA,
    accountB: b.id,
    keyB,
    ownTasks,
    foreignTask: (foreign.body as { id: string }).id,
    ownFile,
    foreignFile,
    deliveryId: deliveries.data[0]?.id ?? 'msg_none',
    requestId: String(foreign.headers['x-request-id']),
    ...(signingKey ? { signingKey } : {}),
  };
}

export async function closeWorld(w: World): Promise<void> {
  servers.delete(w.t.emulator.app);
  await w.t.close();
}

export async function withWorld<T>(run: (w: World) => Promise<T>): Promise<T> {
  const w = await world();
  try {
    return await run(w);
  } finally {
    await closeWorld(w);
  }
}

export const asA = (w: World): Record<string, string> => ({ Authorization: `Bearer ${w.keyA}` });
