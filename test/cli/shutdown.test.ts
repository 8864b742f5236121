import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, expect, it } from 'vitest';
import { stateOnDisk } from '../support/state.ts';
import { admin, DEMO_KEY, heldPost, killAll, startCli, tryConnect, within } from '../support/cli.ts';

// Graceful shutdown of `svc-emulator start` on SIGTERM and SIGINT: no new connections, requests in flight
// finish, paced streams end at once with their terminal event, the store is flushed, exit 0; a second signal
// exits at once; what outlasts the grace period is cut. Each test has its own process and store.

const dirs: string[] = [];
afterEach(() => killAll());
afterAll(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

/** A store file path in a fresh temporary folder. */
async function tempDb(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-shutdown-'));
  dirs.push(dir);
  return join(dir, 'store.db');
}

const TASK = JSON.stringify({ model: 'video-gen-2.0-fast', input: { prompt: 'a cat surfing' } });
const JSON_KEY = { Authorization: `Bearer ${DEMO_KEY}`, 'Content-Type': 'application/json' };



it(
  'on SIGTERM refuses new connections, finishes a submission still being sent, keeps both tasks on disk and exits 0',
  async () => {
    const db = await tempDb();
    const cli = await startCli(['--db', db, '--clock', 'manual', '--log-level', 'info']);
    const before = (await (await fetch(`${cli.base}/v1/tasks`, { method: 'POST', headers: JSON_KEY, body: TASK })).json()) as { id: string };
    const { req, answer } = await heldPost(cli, '/v1/tasks', JSON_KEY, Buffer.byteLength(TASK));
    req.write(TASK.slice(0, 20));

    cli.child.kill('SIGTERM');
    await cli.printed(/SIGTERM, closing/);
    // Still running (the submission holds it), and no longer accepting.
    expect(await tryConnect(cli)).toBe('ECONNREFUSED');
    expect(cli.child.exitCode).toBeNull();

    req.end(TASK.slice(20));
    const { res, body } = await answer;
    expect(res.statusCode).toBe(200);
    expect(res.headers.connection).toBe('close');
    const task = JSON.parse(body) as { id: string; status: string };
    expect(task.status).toBe('queued');
    expect(await cli.exited).toBe(0);
    expect(cli.output()).toContain('closed, store flushed');
    const stored = stateOnDisk(db).tasks;
    expect(stored.find((t) => t.task.id === before.id)?.task).toMatchObject({ id: before.id, status: 'queued' });
    expect(stored.find((t) => t.task.id === task.id)?.task).toMatchObject({ id: task.id, status: 'queued' });
  },
);

it('sends a paced stream to its end at once on SIGTERM, with the whole answer and its terminal event', async () => {
  const db = await tempDb();
  const cli = await startCli(['--db', db, '--clock', 'manual', '--log-level', 'info']);
  // Unhurried, this stream would take 40 seconds: four times the grace period.
  const paced = { name: 'paced', outcome: 'succeeded', text: { first_token_ms: 0, chunk_interval_ms: 1000, output_tokens: 40 } };
  expect((await admin(cli, 'POST', '/_emulator/scenarios', { scenarios: [paced] })).status).toBe(201);
  const chat = (stream: boolean): Promise<Response> =>
    fetch(`${cli.base}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...JSON_KEY, 'X-Emulator-Scenario': 'paced' },
      body: JSON.stringify({ model: 'svc-text-lite', messages: [{ role: 'user', content: 'Say something long.' }], seed: 7, stream }),
    });
  const whole = (await (await chat(false)).json()) as { choices: [{ message: { content: string } }] };

  const res = await chat(true);
  expect(res.status).toBe(200);
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let text = '';
  while (!/"content":"[^"]/.test(text)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the stream ended before its first word: ${text}`);
    text += decoder.decode(value, { stream: true });
  }
  cli.child.kill('SIGTERM');
  const rest = async (): Promise<string> => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return text;
      text += decoder.decode(value, { stream: true });
    }
  };
  await within(20_000, rest(), 'the rest of the stream');

  const events = text.split('\n\n').filter((e) => e !== '');
  expect(events.at(-1)).toBe('data: [DONE]');
  const chunks = events.slice(0, -1).map((e) => JSON.parse(e.replace(/^data: /, '')) as { choices: { delta: { content?: string }; finish_reason: string | null }[] });
  expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe(whole.choices[0].message.content);
  expect(chunks.at(-1)?.choices[0]?.finish_reason).toBe('stop');
  expect(await within(20_000, cli.exited, 'the exit')).toBe(0);
  // The stream's call record, written just after its answer, made it to disk: settled, not cut.
  const record = stateOnDisk(db).calls.find((c) => c.request_id === res.headers.get('x-request-id'));
  expect(record).toMatchObject({ status: 200, text: { stream: true, output_tokens: 40, client_closed: false } });
});

it('cuts a request that outlasts the grace period, says so, and still exits 0 with the store flushed', async () => {
  const db = await tempDb();
  const cli = await startCli(['--db', db, '--clock', 'manual', '--log-level', 'info', '--shutdown-grace-ms', '300']);
  const { req, answer } = await heldPost(cli, '/v1/tasks', JSON_KEY, Buffer.byteLength(TASK));
  req.write(TASK.slice(0, 20));
  const started = Date.now();
  cli.child.kill('SIGTERM');
  await expect(answer).rejects.toThrow(/socket hang up|ECONNRESET/);
  expect(await cli.exited).toBe(0);
  expect(Date.now() - started).toBeGreaterThanOrEqual(250);
  expect(cli.output()).toMatch(/1 request\(s\) still unfinished after the 300 ms grace period were cut/);
  expect(stateOnDisk(db).tasks).toEqual([]);
});

it('exits at once, with 130 (128 + SIGINT), on a second SIGINT during the grace period', async () => {
  const db = await tempDb();
  const cli = await startCli(['--db', db, '--clock', 'manual', '--log-level', 'info', '--shutdown-grace-ms', '60000']);
  const { req } = await heldPost(cli, '/v1/tasks', JSON_KEY, Buffer.byteLength(TASK));
  req.on('error', () => undefined);
  cli.child.kill('SIGINT');
  await cli.printed(/SIGINT, closing/);
  cli.child.kill('SIGINT');
  expect(await within(20_000, cli.exited, 'the forced exit')).toBe(130);
  expect(cli.output()).toContain('SIGINT again, exiting now');
});
