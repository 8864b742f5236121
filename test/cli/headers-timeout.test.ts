import { afterAll, beforeAll, expect, it } from 'vitest';
import { busier } from '../support/busy.ts';
import { admin, DEMO_KEY, killAll, rawConnection as raw, startCli, within } from '../support/cli.ts';
import type { CliEmulator, RawConnection as Raw } from '../support/cli.ts';

// Every connection that has not sent a whole request's headers within --headers-timeout-ms is closed (issue 36,
// item 10: 265 of 20,000 idle connections were still open 130 s after they opened, with a 60 s headers timeout).
// Node checks its headersTimeout only now and then, and only on connections its parser counts as reading a
// request; a connection that sent nothing is closed without an answer, one that sent part of a request gets the
// 408. Kept-alive connections that send nothing after their answer are the keep-alive timeout's: here 0, never
// closed, so any connection closed here was closed by the headers timeout.

const TIMEOUT_MS = 1000;
/** The cut comes at most a tenth of the timeout late; the rest is room for a busy machine. */
const CUT_WITHIN_MS = (TIMEOUT_MS + 800) * busier;

let cli: CliEmulator;
let host = '';
beforeAll(async () => {
  cli = await startCli(['--memory', '--headers-timeout-ms', String(TIMEOUT_MS), '--keep-alive-timeout-ms', '0']);
  host = `Host: 127.0.0.1:${cli.port}`;
});
afterAll(() => killAll());

const TASK = JSON.stringify({ model: 'video-gen-2.0-fast', input: { prompt: 'a cat surfing' } });

const health = (): string => `GET /_emulator/health HTTP/1.1\r\n${host}\r\n\r\n`;

/** A connection that made one request, had its answer, and is kept alive. */
async function keptAlive(): Promise<Raw> {
  const connection = await raw(cli);
  expect(await connection.ask(health())).toMatch(/^HTTP\/1\.1 200/);
  return connection;
}

/** When the connection closes, as `performance.now()`; rejects past the deadline. */
const closeTime = (connection: Raw, what: string): Promise<number> =>
  within(CUT_WITHIN_MS + TIMEOUT_MS, connection.closed.then(() => performance.now()), what);

/** Writes `text` every `gapMs` until the connection closes. */
function keepSending(connection: Raw, text: string, gapMs: number): void {
  const timer = setInterval(() => (connection.socket.destroyed ? clearInterval(timer) : connection.socket.write(text)), gapMs);
  void connection.closed.then(() => clearInterval(timer));
}

const timeouts = async (): Promise<number> => {
  const res = await admin(cli, 'GET', '/_emulator/records?error_code=request_timeout&limit=100');
  return ((await res.json()) as { data: unknown[] }).data.length;
};

it('closes every connection that has not sent a whole request within the headers timeout, and only those', async () => {
  const recordsBefore = await timeouts();
  const started = performance.now();
  const silent = await raw(cli);
  const halfLine = await raw(cli);
  halfLine.socket.write('GET /_emulator/hea');
  const partialHeaders = await raw(cli);
  partialHeaders.socket.write(`GET /_emulator/health HTTP/1.1\r\n${host}\r\n`);
  const idle = await keptAlive();
  // After its answer, only empty lines: no request begins, so node's check never looked at it (and with a
  // keep-alive timeout, each byte would have pushed that back).
  const emptyLines = await keptAlive();
  const emptyLinesSince = performance.now();
  keepSending(emptyLines, '\r\n', 100);
  // After its answer, half of a second request.
  const secondHalf = await keptAlive();
  const secondHalfSince = performance.now();
  secondHalf.socket.write('GET /_emulator/health HTTP/1.1\r\n');
  // Headers whole, body still coming: the request timeout's (ten minutes), whether or not the app answered early.
  const upload = (authorization: string): string =>
    `POST /v1/tasks HTTP/1.1\r\n${host}\r\n${authorization}Content-Type: application/json\r\nContent-Length: ${TASK.length}\r\n\r\n${TASK.slice(0, 10)}`;
  const uploading = await raw(cli);
  uploading.socket.write(upload(`Authorization: Bearer ${DEMO_KEY}\r\n`));
  const answeredEarly = await raw(cli);
  const early = answeredEarly.answer();
  answeredEarly.socket.write(upload(''));
  expect((await early).head).toMatch(/^HTTP\/1\.1 401 /);

  const cuts = [
    { what: 'the silent connection', since: started, closed: closeTime(silent, 'the silent connection') },
    { what: 'half a request line', since: started, closed: closeTime(halfLine, 'half a request line') },
    { what: 'a request line and part of the headers', since: started, closed: closeTime(partialHeaders, 'partial headers') },
    { what: 'empty lines after an answer', since: emptyLinesSince, closed: closeTime(emptyLines, 'empty lines after an answer') },
    { what: 'half a second request', since: secondHalfSince, closed: closeTime(secondHalf, 'half a second request') },
  ];
  for (const { what, since, closed } of cuts) {
    const ms = (await closed) - since;
    expect(ms, what).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
    expect(ms, what).toBeLessThan(CUT_WITHIN_MS);
  }
  // Nothing asked, nothing answered; part of a request, a 408.
  expect(silent.received()).toBe('');
  expect(halfLine.received()).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
  expect(partialHeaders.received()).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
  for (const [name, connection] of [["empty", emptyLines], ["second", secondHalf]] as const) expect(connection.received(), name).toMatch(/^HTTP\/1\.1 200 [^]*\}HTTP\/1\.1 408 Request Timeout\r\n/);
  // The four that sent part of a request are recorded as the 408 they got; the silent one is not.
  await expect.poll(timeouts).toBe(recordsBefore + 4);

  // The kept-alive connection that sent nothing is the keep-alive timeout's (0: never), and still serves.
  expect(idle.isClosed()).toBe(false);
  expect(await idle.ask(health())).toMatch(/^HTTP\/1\.1 200/);
  // The uploads still coming were left to finish: the one not yet answered is answered, the other stays open.
  expect([uploading.isClosed(), answeredEarly.isClosed()]).toEqual([false, false]);
  const submitted = uploading.answer();
  uploading.socket.write(TASK.slice(10));
  expect((await submitted).head).toMatch(/^HTTP\/1\.1 200 /);
  answeredEarly.socket.write(TASK.slice(10));
  expect(await answeredEarly.ask(health())).toMatch(/^HTTP\/1\.1 200/);
  for (const connection of [idle, uploading, answeredEarly]) connection.socket.destroy();
}, 30_000);

it('closes a crowd of silent connections within the headers timeout, without a word', async () => {
  const started = performance.now();
  const crowd = await Promise.all(Array.from({ length: 300 }, () => raw(cli)));
  await within(CUT_WITHIN_MS + TIMEOUT_MS, Promise.all(crowd.map((connection) => connection.closed)), 'closing the crowd');
  expect(performance.now() - started).toBeLessThan(CUT_WITHIN_MS + 500 * busier);
  expect(crowd.filter((connection) => connection.received() !== '')).toHaveLength(0);
  // A request sent at once is still answered.
  const quick = await raw(cli);
  expect(await quick.ask(health())).toMatch(/^HTTP\/1\.1 200/);
  quick.socket.destroy();
}, 30_000);
