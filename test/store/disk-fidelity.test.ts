import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { newAccount, socialNote, startEmulator } from '../support/harness.ts';
import type { TestEmulator } from '../support/harness.ts';
import { startReceiver } from '../support/receiver.ts';
import type { Receiver } from '../support/receiver.ts';
import { stateOf, stateOnDisk } from '../support/state.ts';

/**
 * What the emulator answers from is what is on disk, wherever in the code a change is made: after each phase of a
 * workload that touches every part of the store (tasks of every outcome, cancels, control steps, callbacks with
 * retries, resends, test events, key rotation, key settings and quotas, loaded scenarios, uploads, text calls
 * streamed and not, a client that goes away mid-stream, call records), a second connection reading the file
 * must see exactly what the emulator's own sees. A change left uncommitted shows up here as a difference.
 */

let dir: string;
let db: string;
let t: TestEmulator;
let receiver: Receiver;
let base: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-fidelity-'));
  db = join(dir, 'store.db');
  // Every third callback fails, so retries and failures are journaled too. Before answering, the receiver makes
  // a request of its own, so another commit lands while a send is in flight (as on a busy instance).
  receiver = await startReceiver((n, res) => {
    void fetch(`${base}/v1/models`, { headers: { Authorization: 'Bearer sk-emulator-demo' } })
      .then((r) => r.arrayBuffer())
      .finally(() => res.writeHead(n % 3 === 2 ? 500 : 200).end('ok'));
  });
  t = await startEmulator({ db, allowInsecureWebhooks: true, webhookTimeoutMs: 2000 });
  base = await t.emulator.listen(0);
});
afterEach(async () => {
  await t.close();
  await receiver.close();
  await rm(dir, { recursive: true, force: true });
});

const inMemory = (): unknown => stateOf(t.emulator);
const onDisk = (): unknown => stateOnDisk(db);
/**
 * Callbacks may still be in flight when a phase ends, so both are read again until they agree (within 2 s). A
 * change never committed never agrees.
 */
const expectDiskToMatch = async (): Promise<void> => {
  let memory: unknown;
  let disk: unknown;
  for (let i = 0; i < 100; i += 1) {
    memory = inMemory();
    disk = onDisk();
    if (isDeepStrictEqual(disk, memory)) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  expect(disk).toEqual(memory);
};
const advance = (seconds: number) => t.admin.post('/_emulator/clock/advance', { seconds });

it('has on disk exactly what is in memory after every phase of a workload touching every part of the store', async () => {
  const account = await newAccount(t, '5000.000');
  await t.admin.post(`/_emulator/accounts/${account.id}/webhook`, { url: receiver.url });
  const api = t.as(account.key);

  // Tasks of every outcome, a cancel, control steps, an idempotent replay.
  const ids: string[] = [];
  for (const scenario of ['default', 'instant', 'timeout', 'no_result', 'cancelable', 'rejected', 'slow']) {
    const res = await api.post('/v1/tasks', socialNote({ note: `https://notes.example.com/n/${scenario}` }), { 'X-Emulator-Scenario': scenario, 'Idempotency-Key': `k-${scenario}` });
    if (res.status === 200) ids.push(res.body.id as string);
  }
  await api.post('/v1/tasks', socialNote({ note: 'https://notes.example.com/n/default' }), { 'X-Emulator-Scenario': 'default', 'Idempotency-Key': 'k-default' });
  const video = await api.post('/v1/tasks', { model: 'video-gen-2.0-fast', input: { prompt: 'a cat', resolution: '480p', duration: 4 } });
  await api.post(`/v1/tasks/${ids[0]}/cancel`);
  await t.admin.post(`/_emulator/tasks/${ids[4]}/advance`);
  await t.admin.post(`/_emulator/tasks/${video.body.id}/complete`, {});
  await expectDiskToMatch();

  // The clock runs everything to the end: transitions, callbacks, retries (a third fail), file records.
  await advance(3600);
  await advance(9 * 3600);
  await expectDiskToMatch();

  // Callback control: resend, a test event, rotation; key settings and a quota; a loaded scenario.
  const messages = (await t.admin.get(`/_emulator/webhooks/deliveries?task_id=${ids[1]}`)).body.data as { id: string }[];
  await t.admin.post(`/_emulator/webhooks/deliveries/${messages[0]?.id}/resend`);
  await t.admin.post(`/_emulator/accounts/${account.id}/webhook/test`);
  await t.admin.post(`/_emulator/accounts/${account.id}/webhook/rotate`);
  await t.admin.send((agent) =>
    agent
      .patch(`/_emulator/keys/${account.key}`)
      .set('Authorization', 'Bearer test-admin-token')
      .send({ quota: { points: '100.000', period: 'daily' }, rpm: 1000, concurrency: 50 }),
  );
  await api.post('/v1/tasks', socialNote({ note: 'https://notes.example.com/n/quota' }));
  await t.admin.post('/_emulator/scenarios', {
    scenarios: [
      { name: 'loaded-one', outcome: 'succeeded', queue_seconds: 1, processing_seconds: 1 },
      { name: 'drip', outcome: 'succeeded', text: { output_tokens: 200, chunk_interval_ms: 5 } },
    ],
  });
  await expectDiskToMatch();

  // Uploads, text calls streamed and not, and a stream whose client goes away (settled after the record).
  await api.send((agent) => agent.post('/v1/files').set('Authorization', `Bearer ${account.key}`).attach('file', Buffer.from('hello'), { filename: 'a.txt', contentType: 'text/plain' }));
  await api.post('/v1/chat/completions', { model: 'svc-text-pro', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 16 });
  await api.post('/v1/messages', { model: 'svc-text-pro', max_tokens: 16, stream: true, messages: [{ role: 'user', content: 'Hi' }] });
  const going = new AbortController();
  const stream = await fetch(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${account.key}`, 'Content-Type': 'application/json', 'X-Emulator-Scenario': 'drip' },
    body: JSON.stringify({ model: 'svc-text-pro', messages: [{ role: 'user', content: 'a long one' }], max_tokens: 300, stream: true }),
    signal: going.signal,
  });
  await stream.body?.getReader().read();
  going.abort();
  // The disconnect is settled once the server notices it: wait for the record to say so.
  const closed = async (): Promise<boolean> => stateOf(t.emulator).calls.some((c) => c.text?.client_closed === true);
  for (let i = 0; i < 200 && !(await closed()); i += 1) await new Promise((r) => setTimeout(r, 10));
  expect(await closed()).toBe(true);
  await expectDiskToMatch();

  // Sweeps: files expire, records and finished messages age out.
  await advance(31 * 24 * 3600);
  await expectDiskToMatch();

  // And a restart reads the same.
  const before = inMemory();
  await t.close();
  t = await startEmulator({ db, allowInsecureWebhooks: true, webhookTimeoutMs: 2000 });
  // The same records (what each start notes, the count of starts and how far the ledger has been checked for text
  // calls left frozen, is the store's own and not in a state document).
  expect(inMemory()).toEqual(before);
});
