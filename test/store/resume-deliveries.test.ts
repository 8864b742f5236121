import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { socialNote, startEmulator } from '../support/harness.ts';
import type { TestEmulator } from '../support/harness.ts';
import { startReceiver } from '../support/receiver.ts';
import type { Receiver } from '../support/receiver.ts';

// A restart schedules the pending callbacks a page at a time (issue 42, item 3), as it does the unfinished tasks:
// the first page before the start ends, the rest while the emulator already answers. An advance made at once
// must still bring every delivery its next attempt, however late its page was scheduled.

const TASKS = 1_100;

let dir: string;
let receiver: Receiver;
const open: TestEmulator[] = [];
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-resume-deliveries-'));
  receiver = await startReceiver((_n, res) => res.writeHead(500).end('no'));
});
afterEach(async () => {
  for (const t of open.splice(0)) await t.close();
  await receiver.close();
  await rm(dir, { recursive: true, force: true });
});

// The sends' own timeout is real time: 1,100 at once on a machine busy with the rest of the suite took longer than
// 2 s for some (CI saw 1,022 of 1,100 arrive), which would make them refused attempts, not missed schedules.
const options = (db: string) => ({ db, clock: 'manual' as const, allowInsecureWebhooks: true, webhookTimeoutMs: 30_000 });

it('gives every pending callback of a large store its next attempt on an advance made as soon as the restarted emulator answers', async () => {
  const db = join(dir, 'store.db');
  const first = await startEmulator(options(db));
  const account = await first.admin.post('/_emulator/accounts', { points: '1000000.000', webhook_url: receiver.url });
  expect(account.status).toBe(201);
  const key = (await first.admin.post(`/_emulator/accounts/${account.body.id}/keys`, {})).body.key as string;
  for (let i = 0; i < TASKS; i += 50) {
    const answers = await Promise.all(Array.from({ length: Math.min(50, TASKS - i) }, () => first.as(key).post('/v1/tasks', socialNote())));
    for (const res of answers) expect(res.status).toBe(200);
  }
  // Every task ends and its first attempt is refused; the retry falls due a minute after each failure.
  await first.emulator.clock.advanceSeconds(40);
  expect(receiver.received).toHaveLength(TASKS);
  await first.close();

  const t = await startEmulator(options(db));
  open.push(t);
  await t.emulator.clock.advanceSeconds(61);
  expect(receiver.received).toHaveLength(2 * TASKS);
  const ids = new Set(receiver.received.slice(TASKS).map((r) => String(r.headers['webhook-id'])));
  expect(ids.size).toBe(TASKS);
  const pending = await t.admin.get(`/_emulator/webhooks/deliveries?status=pending&limit=1000`);
  expect(pending.body.data.every((d: { attempts: unknown[] }) => d.attempts.length === 2)).toBe(true);
}, 120_000);
