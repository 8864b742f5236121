import OpenAI from 'openai';
import { expect, it } from 'vitest';
import { useSession } from './session.ts';

const session = useSession('orders');
const note = { model: 'social-notes-data', input: { mode: 'note', note: 'https://notes.example.com/n/1', agree: true } };

it('a note succeeds on this file’s own clock', async () => {
  const submitted = await session.api('POST', '/v1/tasks', note);
  expect(submitted.body.status).toBe('queued');
  await session.advance(60);
  expect((await session.api('GET', `/v1/tasks/${submitted.body.id}`)).body.status).toBe('succeeded');
});

it('an SDK needs only the session’s key and the usual base address', async () => {
  const client = new OpenAI({ apiKey: session.key, baseURL: `${session.url}/v1` });
  const reply = await client.chat.completions.create({ model: 'svc-text-pro', messages: [{ role: 'user', content: 'Hello' }], max_tokens: 16 });
  expect(reply.choices[0]?.message.content).toBeTruthy();
  // The call is in this session's records, nobody else's.
  expect((await session.control('GET', '/_emulator/records')).body.data.map((r: { path: string }) => r.path)).toContain('/v1/chat/completions');
});
