import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createEmulator } from '../../src/index.ts';
import type { Emulator } from '../../src/index.ts';
import { socialNote } from '../support/harness.ts';

/**
 * A full disk is an error, not a crash: on a small tmpfs of its own, the emulator answers every request while the
 * disk is full with a documented answer (503 service_unavailable, Retry-After, its request id) or serves it, never
 * exits, loses nothing it acknowledged, and serves normally again as soon as space returns. Mounting needs root
 * (tests and CI run as root here); elsewhere the test says why it is skipped.
 * In this process, over a real port: an emulator that gave up would take the test's process down with it (an
 * uncaught error, a libsql abort), which fails the test as surely as an exit of its own would.
 */
const dir = mkdtempSync(join(tmpdir(), 'svc-full-'));
function mountTmpfs(): string | null {
  if (process.getuid?.() !== 0) return 'mounting a tmpfs needs root';
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', dir], { stdio: 'pipe' });
    return null;
  } catch (err) {
    return `mount -t tmpfs failed: ${String((err as { stderr?: Buffer }).stderr ?? err).trim()}`;
  }
}
const skipped = mountTmpfs();
if (skipped) console.warn(`full-disk test skipped: ${skipped}`);

let emulator: Emulator;
let base: string;
const KEY = { Authorization: 'Bearer sk-emulator-demo', 'Content-Type': 'application/json' };
const ADMIN = { Authorization: 'Bearer full-disk-admin', 'Content-Type': 'application/json' };
const filler = join(dir, 'filler');

beforeAll(async () => {
  if (skipped) return;
  emulator = await createEmulator({ db: join(dir, 'store.db'), clock: 'manual', adminToken: 'full-disk-admin', log: () => undefined });
  base = await emulator.listen(0);
});
afterAll(async () => {
  await emulator?.close();
  if (!skipped) execFileSync('umount', ['-l', dir]);
  rmSync(dir, { recursive: true, force: true });
});

/** Writes until the disk refuses: the tmpfs is then full to the last block. */
function fillDisk(): void {
  const chunk = Buffer.alloc(64 * 1024, 1);
  let size = 0;
  try {
    for (;;) {
      writeFileSync(filler, chunk, { flag: 'a' });
      size += chunk.length;
    }
  } catch (err) {
    expect((err as NodeJS.ErrnoException).code).toBe('ENOSPC');
  }
  expect(size).toBeGreaterThan(0);
}

const submit = (): Promise<Response> => fetch(`${base}/v1/tasks`, { method: 'POST', headers: KEY, body: JSON.stringify(socialNote()) });

it.skipIf(skipped !== null)('answers 503 with its request id while the disk is full, stays up, keeps what it acknowledged, and serves again once there is room', async () => {
  const before = await submit();
  expect(before.status).toBe(200);
  const acknowledged = ((await before.json()) as { id: string }).id;

  fillDisk();
  let refused = 0;
  // Submits, reads (whose records are written later), uploads and clock advances, several times over: each is
  // answered, and the process never exits.
  for (let i = 0; i < 20; i += 1) {
    const res = await submit();
    expect([200, 503]).toContain(res.status);
    if (res.status === 503) {
      refused += 1;
      const body = (await res.json()) as { error: { code: string; request_id: string } };
      expect(body.error.code).toBe('service_unavailable');
      expect(body.error.request_id).toBe(res.headers.get('x-request-id'));
      expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
    }
    expect([200, 503]).toContain((await fetch(`${base}/v1/models`, { headers: KEY })).status);
    const upload = await fetch(`${base}/v1/files`, { method: 'POST', headers: KEY, body: JSON.stringify({ filename: 'a.png', content: Buffer.alloc(200_000, 7).toString('base64') }) });
    expect([200, 400, 413, 422, 503]).toContain(upload.status);
    expect(upload.headers.get('x-request-id')).toMatch(/^req_[a-z0-9]{24}$/);
    // 20 × 30 s stays within the task's 16 minutes of processing: past them, a task whose every transition the
    // full disk refused would rightly time out once there is room (whether a transition of the queue gets in
    // meanwhile depends on how much of the disk the write-ahead log still has).
    const advance = await fetch(`${base}/_emulator/clock/advance`, { method: 'POST', headers: ADMIN, body: '{"seconds":30}' });
    expect([200, 503]).toContain(advance.status);
  }
  expect(refused).toBeGreaterThan(0);
  // Still up: the health endpoint answers (whatever it says of a full disk).
  expect([200, 503]).toContain((await fetch(`${base}/_emulator/health`, { headers: ADMIN })).status);

  rmSync(filler);
  const after = await submit();
  expect(after.status).toBe(200);
  const advanced = await fetch(`${base}/_emulator/clock/advance`, { method: 'POST', headers: ADMIN, body: '{"seconds":3600}' });
  expect(advanced.status).toBe(200);
  // The task acknowledged before the disk filled is there and finished: its transitions, refused while the disk was
  // full, ran once there was room.
  const task = await fetch(`${base}/v1/tasks/${acknowledged}`, { headers: KEY });
  expect(task.status).toBe(200);
  expect(((await task.json()) as { status: string }).status).toBe('succeeded');
  // And it stops as the CLI does on SIGTERM: everything flushed, nothing thrown.
  await emulator.close();
});
