import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { adminOf, clientOf, crashWorkspace, expectStatus, kill9, startOn } from './emulator-process.ts';

// Sessions on a file store, with the real CLI: every acknowledged write of a session (the session itself, its
// tasks, its clock, its scenarios and its own keys) is there after a kill -9 and after a SIGTERM, still reached by
// the same key and admin token, and a session ended is gone with its folder.

const ws = crashWorkspace('session-restart');

const note = { model: 'social-notes-data', input: { mode: 'note', note: 'https://notes.example.com/n/9', agree: true } };

it("keeps a session's world across a kill -9 and a SIGTERM, reached by the same key and token", { timeout: 60_000 }, async () => {
  let cli = await startOn(ws.db);
  const made = expectStatus<{ id: string; key: string; admin_token: string; account: { id: string } }>(
    await adminOf(cli).post('/_emulator/sessions', { name: 'kept', clock: { mode: 'manual', start_time: '2027-03-01T08:00:00+08:00' }, scenarios: [{ name: 'slow-one', queue_seconds: 30, processing_seconds: 120, outcome: 'succeeded' }] }),
    201,
    'create session',
  );
  const gone = expectStatus<{ id: string; key: string }>(await adminOf(cli).post('/_emulator/sessions', {}), 201, 'create a second session');
  const api = (base: string) => clientOf(base, made.key);
  const own = (base: string) => clientOf(base, made.admin_token);
  const task = expectStatus<{ id: string }>(await api(cli.base).post('/v1/tasks', note, { 'X-Emulator-Scenario': 'slow-one' }), 200, 'submit');
  expectStatus(await own(cli.base).post('/_emulator/clock/advance', { seconds: 60 }), 200, 'advance');
  const added = expectStatus<{ key: string }>(await own(cli.base).post(`/_emulator/accounts/${made.account.id}/keys`, {}), 201, 'a key of its own');
  const folder = join(ws.dir, 'sessions', gone.id);
  expect(existsSync(join(folder, 'store.db'))).toBe(true);
  expectStatus(await adminOf(cli).send('DELETE', `/_emulator/sessions/${gone.id}`), 200, 'end the second session');
  expect(existsSync(folder)).toBe(false);

  // What a kill between making a session's store and listing it would leave: a folder no row lists.
  const orphan = join(ws.dir, 'sessions', 'ses_unlisted0000000000000000');
  for (const stop of ['kill -9', 'SIGTERM'] as const) {
    if (stop === 'kill -9') await kill9(cli);
    else {
      cli.child.kill('SIGTERM');
      expect(await cli.exited).toBe(0);
    }
    mkdirSync(orphan, { recursive: true });
    writeFileSync(join(orphan, 'store.db'), 'half made');
    cli = await startOn(ws.db, ['--log-level', 'info']);
    expect(cli.output()).toMatch(/sessions {5}1 kept in the store/);
    expect(existsSync(orphan)).toBe(false);
    const listed = expectStatus<{ data: { id: string; name: string }[] }>(await adminOf(cli).get('/_emulator/sessions'), 200, `list after ${stop}`);
    expect(listed.data.map((s) => [s.id, s.name])).toEqual([[made.id, 'kept']]);
    const after = expectStatus<{ status: string }>(await api(cli.base).get(`/v1/tasks/${task.id}`), 200, `task after ${stop}`);
    expect(after.status).toBe('processing');
    expect(expectStatus<{ now: string }>(await own(cli.base).get('/_emulator/clock'), 200, 'clock').now).toBe('2027-03-01T08:01:00+08:00');
    expectStatus(await clientOf(cli.base, added.key).get('/v1/tasks'), 200, `the added key after ${stop}`);
    expect((await clientOf(cli.base, gone.key).get('/v1/tasks')).status).toBe(401);
    // Nothing of the session shows in the default world.
    expect((await adminOf(cli).get(`/_emulator/tasks/${task.id}`)).status).toBe(404);
  }
  // The session's clock still drives its task: the scenario it was made with survived too.
  expectStatus(await own(cli.base).post('/_emulator/clock/advance', { seconds: 600 }), 200, 'advance after the restarts');
  expect(expectStatus<{ status: string }>(await api(cli.base).get(`/v1/tasks/${task.id}`), 200, 'task at the end').status).toBe('succeeded');
});
