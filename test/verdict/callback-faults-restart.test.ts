import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { newAccount, socialNote, startEmulator } from '../support/harness.ts';
import type { TestEmulator } from '../support/harness.ts';
import { startReceiver } from '../support/receiver.ts';
import type { Receiver } from '../support/receiver.ts';

// Callback faults across a restart of a file store: what a fault decided and the store keeps (a delayed first
// attempt's due time) holds after it; the rules themselves, kept in memory, are gone.

let dir = '';
let t: TestEmulator | null = null;
let receiver: Receiver | null = null;
afterEach(async () => {
  await t?.close();
  await receiver?.close();
  await rm(dir, { recursive: true, force: true });
});

it("delay: a restart keeps the delay, stored as the delivery's due time, though the rule itself is gone", async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-delay-'));
  const store = join(dir, 'store.db');
  receiver = await startReceiver();
  t = await startEmulator({ db: store, allowInsecureWebhooks: true });
  const created = await newAccount(t);
  await t.admin.post(`/_emulator/accounts/${created.id}/webhook`, { url: receiver.url });
  await t.admin.post('/_emulator/faults', { rules: [{ fault: { kind: 'delay', seconds: 90 } }] });
  await t.as(created.key).post('/v1/tasks', socialNote(), { 'X-Emulator-Scenario': 'instant' });
  await t.admin.post('/_emulator/clock/advance', { seconds: 0 });
  expect(receiver.received).toHaveLength(0);
  await t.close();

  t = await startEmulator({ db: store, allowInsecureWebhooks: true });
  expect((await t.admin.get('/_emulator/faults')).body.data).toEqual([]);
  await t.admin.post('/_emulator/clock/advance', { seconds: 89 });
  expect(receiver.received).toHaveLength(0);
  await t.admin.post('/_emulator/clock/advance', { seconds: 1 });
  expect(receiver.received).toHaveLength(1);
});
