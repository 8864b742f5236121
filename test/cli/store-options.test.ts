import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { parseStartOptions } from '../../src/cli/start-options.ts';
import { createEmulator } from '../../src/index.ts';

/** The store's options reach the emulator from flags and the environment, and do what they say. */

it('reads --store-sync, --compact-after-mb and --delivery-retention-hours from flags and the environment', () => {
  expect(parseStartOptions(['--store-sync', '--compact-after-mb', '0.5', '--delivery-retention-hours', '2'], {})).toMatchObject({
    storeSync: true,
    compactAfterBytes: 524_288,
    deliveryRetentionSeconds: 7200,
  });
  expect(parseStartOptions([], { SVC_EMULATOR_STORE_SYNC: 'true', SVC_EMULATOR_DELIVERY_RETENTION_HOURS: '1' })).toMatchObject({
    storeSync: true,
    deliveryRetentionSeconds: 3600,
  });
  const defaults = parseStartOptions([], {});
  expect(defaults.storeSync).toBeUndefined();
  expect(defaults.compactAfterBytes).toBeUndefined();
  expect(() => parseStartOptions(['--compact-after-mb', '0'], {})).toThrow();
});

it('compacts once the journal passes --compact-after-mb, with every write synced, and keeps every task', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-store-options-'));
  try {
    const db = join(dir, 'db.json');
    const emulator = await createEmulator({ db, clock: 'manual', adminToken: 'a', log: () => undefined, storeSync: true, compactAfterBytes: 20_000 });
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
    await emulator.store.compact();
    expect(emulator.store.stats().compactions).toBeGreaterThanOrEqual(2);
    await emulator.close();
    expect((await readdir(dir)).filter((n) => n.endsWith('.journal'))).toHaveLength(1);

    const again = await createEmulator({ db, clock: 'manual', adminToken: 'a', log: () => undefined });
    expect(ids.every((id) => Object.hasOwn(again.store.peek().tasks, id))).toBe(true);
    await again.close();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
