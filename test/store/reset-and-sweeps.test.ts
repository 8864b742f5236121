import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.ts';
import type { StoredDelivery } from '../../src/store/index.ts';
import { oldestFirst } from '../../src/store/oldest-first.ts';
import { startEmulator } from '../support/harness.ts';

/** Resets in the middle of things, and sweeps of a long queue: the edges a review of the store found. */

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-reset-'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

it('keeps the start counter through a reset, so a seeded restart does not hand out ids already stored', async () => {
  const db = join(dir, 'db.json');
  const first = await startEmulator({ db, seed: 'same' });
  await first.admin.post('/_emulator/reset');
  const before = (await first.api.get('/v1/models')).headers['x-request-id'] as string;
  await first.close();

  const second = await startEmulator({ db, seed: 'same' });
  try {
    expect(second.emulator.store.data.starts).toBe(2);
    const after = (await second.api.get('/v1/models')).headers['x-request-id'] as string;
    expect(after).not.toBe(before);
    expect(Object.hasOwn(second.emulator.store.peek().calls, before)).toBe(true);
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

it('sweeps a queue of 200,000 messages that must all be kept, without overflowing the stack', async () => {
  const store = await openStore({});
  for (let i = 0; i < 200_000; i += 1) store.data.deliveries[`msg_${i}`] = { id: `msg_${i}`, status: 'pending' } as StoredDelivery;
  const queue = oldestFirst(store, 'deliveries');
  expect(queue.sweep(() => 'keep')).toBe(0);
  expect(queue.sweep((id) => (id === 'msg_0' ? 'drop' : 'stop'))).toBe(1);
  expect(Object.keys(store.peek().deliveries)).toHaveLength(199_999);
});
