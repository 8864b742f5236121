import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { CallRecord } from '../../src/calls/index.ts';
import { parseTime } from '../../src/clock/index.ts';
import { startEmulator } from '../support/harness.ts';

/** Resets in the middle of things, and sweeps of a long queue: the edges a review of the store found. */

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-reset-'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

it('keeps the start counter through a reset, so a seeded restart does not hand out ids already stored', async () => {
  const db = join(dir, 'store.db');
  const first = await startEmulator({ db, seed: 'same' });
  await first.admin.post('/_emulator/reset');
  const before = (await first.api.get('/v1/models')).headers['x-request-id'] as string;
  await first.close();

  const second = await startEmulator({ db, seed: 'same' });
  try {
    expect(second.emulator.internals.store.meta.get('starts')).toBe(2);
    const after = (await second.api.get('/v1/models')).headers['x-request-id'] as string;
    expect(after).not.toBe(before);
    expect(second.emulator.internals.db.calls.get(before)).toBeDefined();
  } finally {
    await second.close();
  }
});

it('settles nothing on the fresh data when a reset comes in the middle of a text call', async () => {
  const t = await startEmulator();
  try {
    await t.admin.post('/_emulator/scenarios', { scenarios: [{ name: 'drip', outcome: 'succeeded', text: { output_tokens: 200, chunk_interval_ms: 5 } }] });
    const base = await t.emulator.listen(0);
    const res = await fetch(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: { Authorization: 'Bearer sk-emulator-demo', 'Content-Type': 'application/json', 'X-Emulator-Scenario': 'drip' },
      body: JSON.stringify({ model: 'svc-text-pro', messages: [{ role: 'user', content: 'a long one' }], max_tokens: 300, stream: true }),
    });
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    expect((await t.admin.post('/_emulator/reset')).status).toBe(200);
    while (!(await reader.read()).done);

    const fresh = (await t.admin.get('/_emulator/accounts/acct_demo')).body;
    expect(fresh).toMatchObject({ available: '100000.000', frozen: '0.000', charged: '0.000' });
    const ledger = (await t.admin.get('/_emulator/accounts/acct_demo/ledger')).body.data as { kind: string }[];
    expect(ledger.map((e) => e.kind)).toEqual(['fund']);
  } finally {
    await t.close();
  }
});

// The sweep deletes 500 records per transaction (src/store/sweep.ts): 5,000 are ten batches, every one of which
// must run within the one advance.
it('sweeps 5,000 old call records in batches (ten of 500) on one advance, and keeps the young ones', async () => {
  const t = await startEmulator({ startTime: '2026-11-23T09:00:00+08:00' });
  try {
    const { db } = t.emulator.internals;
    const old = parseTime('2026-11-23T09:00:00+08:00');
    db.store.transaction(() => {
      for (let i = 0; i < 5_000; i += 1) {
        const record = { request_id: `req_old${String(i).padStart(19, '0')}`, at: '2026-11-23T09:00:00+08:00' } as CallRecord;
        db.calls.put(record, old);
      }
    });
    await t.admin.post('/_emulator/clock/advance', { seconds: 30 * 24 * 3600 - 60 });
    const young = (await t.api.get('/v1/models')).headers['x-request-id'] as string;
    // The records of answers wait a few milliseconds for others to share their commit; a reader asks for them.
    db.store.flushLater();
    expect(db.store.driver.prepare('SELECT count(*) FROM calls').get()?.[0]).toBeGreaterThan(5_000);
    await t.admin.post('/_emulator/clock/advance', { seconds: 3600 });
    // Every batch ran at the 30-day sweep: nothing old is left, and the record a minute younger stays.
    expect(db.store.driver.prepare("SELECT count(*) FROM calls WHERE request_id LIKE 'req_old%'").get()?.[0]).toBe(0);
    expect(db.calls.get(young)).toBeDefined();
  } finally {
    await t.close();
  }
});
