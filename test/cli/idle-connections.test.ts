import { afterEach, expect, it } from 'vitest';
import { DEMO_KEY, HEALTH, heldPost, killAll, rawConnection as raw, startCli, within } from '../support/cli.ts';
import type { CliEmulator, RawConnection as Raw } from '../support/cli.ts';

// Idle connections cannot lock out clients (issue 24, item 8): 20,000 idle keep-alive connections once filled the
// default cap and a normal client was refused 92 % of the time for 76 s. At the cap, the longest-idle connection
// is closed to make room; a connection with a request in flight never is, and only when every one is busy is a
// new one refused. The cap is lowered here; idle kept-alive connections never time out (--keep-alive-timeout-ms 0),
// so only the cap closes them.

afterEach(() => killAll());

const TASK = JSON.stringify({ model: 'video-gen-2.0-fast', input: { prompt: 'a cat surfing' } });
const JSON_KEY = { Authorization: `Bearer ${DEMO_KEY}`, 'Content-Type': 'application/json' };

/** A connection that made one request, had its answer and stays open, idle. */
async function keptAlive(cli: CliEmulator): Promise<Raw> {
  const connection = await raw(cli);
  expect(await connection.ask()).toMatch(/^HTTP\/1\.1 200/);
  return connection;
}

const lines = (cli: CliEmulator, text: string): string[] => cli.output().split('\n').filter((line) => line.includes(text));

it('closes the longest-idle connections to answer every new client at the cap, never one with a request in flight', async () => {
  const cli = await startCli(['--memory', '--max-connections', '50', '--keep-alive-timeout-ms', '0']);
  // The oldest connections: an upload still being sent and a request whose headers are still coming.
  const upload = await heldPost(cli, '/v1/tasks', JSON_KEY, Buffer.byteLength(TASK));
  upload.req.write(TASK.slice(0, 20));
  const partial = await raw(cli);
  partial.socket.write('GET /_emulator/health HTTP/1.1\r\n');
  // Then 24 that connected and sent nothing, and 24 kept alive after one answer: 50, the cap.
  const silent: Raw[] = [];
  for (let i = 0; i < 24; i += 1) silent.push(await raw(cli));
  const kept: Raw[] = [];
  for (let i = 0; i < 24; i += 1) kept.push(await keptAlive(cli));
  // The first kept-alive one is used again, so it is now the most recently active.
  expect(await kept[0]?.ask()).toMatch(/^HTTP\/1\.1 200/);

  // 30 new clients in a row, each kept open after its answer: every one is answered.
  const clients: Raw[] = [];
  for (let i = 0; i < 30; i += 1) {
    const client = await raw(cli);
    expect(await within(20_000, client.ask(), `client ${i}`)).toMatch(/^HTTP\/1\.1 200/);
    clients.push(client);
  }

  // Each made room by closing the one idle longest: the 24 silent ones, then kept-alive ones in the order they
  // were last used, unanswered (a silent one had asked nothing; a kept-alive one had its answer).
  const evicted = [...silent, ...kept.slice(1, 7)];
  await within(20_000, Promise.all(evicted.map((connection) => connection.closed)), 'closing the longest-idle');
  for (const connection of silent) expect(connection.received()).toBe('');
  const spared = [...kept.slice(7), kept[0], ...clients].filter((connection) => connection !== undefined);
  expect(spared).toHaveLength(48);
  expect(spared.filter((connection) => connection.isClosed())).toHaveLength(0);
  // Still open and serving: the idle ones answer, the request still coming and the upload finish.
  for (const connection of spared) expect(await connection.ask()).toMatch(/^HTTP\/1\.1 200/);
  expect(await partial.ask('Host: 127.0.0.1\r\n\r\n')).toMatch(/^HTTP\/1\.1 200/);
  upload.req.end(TASK.slice(20));
  const { res } = await upload.answer;
  expect(res.statusCode).toBe(200);

  // One warning for the burst, then how many were closed once below the cap again.
  expect(lines(cli, 'connection cap reached')).toHaveLength(1);
  expect(lines(cli, 'connection cap reached')[0]).toContain('the longest-idle connections are closed to make room');
  for (const connection of [...spared, partial]) connection.socket.destroy();
  upload.req.destroy();
  await cli.printed(/idle connection\(s\) were closed/);
  expect(lines(cli, 'idle connection(s) were closed').map((line) => line.slice(13))).toEqual([
    'warn  connection cap: 30 idle connection(s) were closed to make room and 0 new one(s) were closed unanswered while at the cap of 50; below it again',
  ]);
});

it('refuses a new connection only while every one at the cap has a request in flight', async () => {
  const cli = await startCli(['--memory', '--max-connections', '3', '--keep-alive-timeout-ms', '0']);
  const uploads = [];
  for (let i = 0; i < 3; i += 1) uploads.push(await heldPost(cli, '/v1/tasks', JSON_KEY, Buffer.byteLength(TASK)));
  const refused = await raw(cli);
  refused.socket.write(HEALTH);
  await within(20_000, refused.closed, 'refusing the connection over the cap');
  expect(refused.received()).toBe('');

  // One upload ends; its connection, kept alive, is idle now and gives way to the next new client.
  const [first, ...rest] = uploads;
  first?.req.end(TASK);
  expect((await first?.answer)?.res.statusCode).toBe(200);
  const next = await raw(cli);
  expect(await within(20_000, next.ask(), 'the next client')).toMatch(/^HTTP\/1\.1 200/);
  for (const upload of rest) upload.req.end(TASK);
  for (const upload of rest) expect((await upload.answer).res.statusCode).toBe(200);
});

it('answers every new client while thousands of idle connections stand at a lowered cap (the chaos run, scaled down)', async () => {
  // The campaign held 20,000 idle connections against the default cap; here 2,000 against a cap of 500, opened as
  // fast as the client can, none of them sending a byte.
  const cli = await startCli(['--memory', '--max-connections', '500', '--keep-alive-timeout-ms', '0']);
  const idle: Raw[] = [];
  for (let batch = 0; batch < 20; batch += 1) idle.push(...(await Promise.all(Array.from({ length: 100 }, () => raw(cli)))));
  let answered = 0;
  for (let i = 0; i < 50; i += 1) {
    const client = await raw(cli);
    if (/^HTTP\/1\.1 200/.test(await within(20_000, client.ask(), `client ${i}`))) answered += 1;
    client.socket.destroy();
  }
  expect(answered).toBe(50);
  // Still at the cap: the idle ones closed were the oldest, as many as the new ones needed.
  const open = idle.filter((connection) => !connection.isClosed());
  expect(open.length).toBeLessThanOrEqual(500);
  expect(idle.slice(-100).every((connection) => !connection.isClosed())).toBe(true);
  for (const connection of idle) connection.socket.destroy();
});
