import { expect, it } from 'vitest';
import { useSession } from './session.ts';

const session = useSession('refunds');
const note = { model: 'social-notes-data', input: { mode: 'note', note: 'https://notes.example.com/n/2', agree: true } };

it('a timeout fails the task and gives every point back, an hour later on this file’s clock', async () => {
  const submitted = await session.api('POST', '/v1/tasks', note, { 'X-Emulator-Scenario': 'timeout' });
  await session.advance(3600);
  const task = (await session.api('GET', `/v1/tasks/${submitted.body.id}`)).body;
  expect([task.status, task.error.code]).toEqual(['failed', 'timeout']);
  expect((await session.control('GET', `/_emulator/accounts/${session.accountId}`)).body.available).toBe('100000.000');
});

it('sees nothing of the other files’ sessions', async () => {
  expect((await session.api('GET', '/v1/tasks')).body.data).toHaveLength(1);
  expect((await session.control('GET', '/_emulator/sessions')).body.data.map((s: { id: string }) => s.id)).toEqual([session.id]);
});
