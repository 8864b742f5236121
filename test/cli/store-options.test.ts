import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { parseStartOptions } from '../../src/cli/start-options.ts';
import { createEmulator } from '../../src/index.ts';

/** The store's options reach the emulator from flags and the environment, and do what they say. */

it('reads --store-sync and --delivery-retention-hours from flags and the environment', () => {
  expect(parseStartOptions(['--store-sync', '--delivery-retention-hours', '2'], {})).toMatchObject({
    storeSync: true,
    deliveryRetentionSeconds: 7200,
  });
  expect(parseStartOptions([], { SVC_EMULATOR_STORE_SYNC: 'true', SVC_EMULATOR_DELIVERY_RETENTION_HOURS: '1' })).toMatchObject({
    storeSync: true,
    deliveryRetentionSeconds: 3600,
  });
  const defaults = parseStartOptions([], {});
  expect(defaults.storeSync).toBeUndefined();
  expect(defaults.db).toBe('./.svc-emulator/store.db');
  expect(() => parseStartOptions(['--compact-after-mb', '1'], {})).toThrow();
});

it('keeps every task with every commit synced (--store-sync) across a restart', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-store-options-'));
  try {
    const db = join(dir, 'store.db');
    const emulator = await createEmulator({ db, clock: 'manual', adminToken: 'a', log: () => undefined, storeSync: true });
    const base = await emulator.listen(0);
    const ids: string[] = [];
    for (let i = 0; i < 40; i += 1) {
      const res = await fetch(`${base}/v1/tasks`, {
        method: 'POST',
        headers: { Authorization: 'Bearer sk-emulator-demo', 'Content-Type': 'application/json' },
        body: JSON.stringify({ model: 'social-notes-data', input: { mode: 'note', note: `https://notes.example.com/n/${i}`, agree: true } }),
      });
      ids.push(((await res.json()) as { id: string }).id);
    }
    expect(emulator.internals.store.driver.prepare('PRAGMA synchronous').get()?.[0]).toBe(2);
    await emulator.close();

    const again = await createEmulator({ db, clock: 'manual', adminToken: 'a', log: () => undefined });
    expect(ids.every((id) => again.internals.db.tasks.has(id))).toBe(true);
    await again.close();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
