import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parseStartOptions, START_HELP } from '../../src/cli/start-options.ts';
import { connectionBudget, createLimitedServer, DEFAULT_SERVER_LIMITS, openFileLimit, resolveLimits } from '../../src/server/index.ts';
import { admin, DEMO_KEY, HEALTH, killAll, rawConnection as raw, startCli, within } from '../support/cli.ts';
import type { CliEmulator, RawConnection as Raw } from '../support/cli.ts';

// The listening server's own limits (emulator-defined: the reference names none): header size, the time to send
// headers and a whole request, idle keep-alive and a connection cap; each a flag, an environment variable and a
// config key. Timeouts are made small by their flags so that nothing here waits long; one process serves the
// tests of every limit but the connection cap, which has its own.

let cli: CliEmulator;
beforeAll(async () => {
  cli = await startCli([
    '--memory',
    '--clock',
    'manual',
    '--max-header-bytes',
    '4096',
    '--headers-timeout-ms',
    '300',
    '--request-timeout-ms',
    '500',
    '--keep-alive-timeout-ms',
    '1000',
  ]);
  const paced = { name: 'paced', outcome: 'succeeded', text: { first_token_ms: 0, chunk_interval_ms: 100, output_tokens: 15 } };
  expect((await admin(cli, 'POST', '/_emulator/scenarios', { scenarios: [paced] })).status).toBe(201);
});
afterAll(() => killAll());



/** Writes `parts` one by one, `gapMs` apart, until they run out or the connection closes. */
function trickle(connection: Raw, parts: string[], gapMs: number): void {
  const next = (): void => {
    const part = parts.shift();
    if (part === undefined || connection.socket.destroyed) return;
    connection.socket.write(part);
    setTimeout(next, gapMs);
  };
  next();
}

/** The call record of `requestId`, once written (records are written after their answer, on a later turn). */
async function recordOf(requestId: string): Promise<Record<string, unknown>> {
  for (;;) {
    const res = await admin(cli, 'GET', `/_emulator/records/${requestId}`);
    if (res.status === 200) return (await res.json()) as Record<string, unknown>;
    expect(res.status).toBe(404);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A refusal's head and body as read off the connection: its request id in the header and in the body agree. */
function refusalOf(received: string, status: string): { head: string; body: Record<string, { code?: string; request_id?: string }>; requestId: string } {
  const [head = '', text = ''] = received.split('\r\n\r\n');
  expect(head).toMatch(new RegExp(`^HTTP/1\\.1 ${status}\r\n`));
  expect(head).toMatch(/\r\nConnection: close(\r\n|$)/i);
  expect(head).toMatch(/\r\nContent-Type: application\/json/i);
  const requestId = /\r\nX-Request-Id: (req_[a-z0-9]{24})(\r\n|$)/i.exec(head)?.[1] ?? '';
  expect(requestId).toMatch(/^req_[a-z0-9]{24}$/);
  const body = JSON.parse(text) as Record<string, { code?: string; request_id?: string }>;
  return { head, body, requestId };
}

it('answers 431 with a request id, the error body and Connection: close to headers over --max-header-bytes, records it, and goes on serving', async () => {
  const models = (padding: number): Promise<Response> =>
    fetch(`${cli.base}/v1/models`, { headers: { Authorization: `Bearer ${DEMO_KEY}`, 'X-Padding': 'a'.repeat(padding), Connection: 'close' } });
  expect((await models(3_000)).status).toBe(200);
  const refused = await models(6_000);
  expect(refused.status).toBe(431);
  expect(refused.headers.get('connection')).toBe('close');
  const requestId = refused.headers.get('x-request-id') ?? '';
  expect(requestId).toMatch(/^req_[a-z0-9]{24}$/);
  expect(await refused.json()).toEqual({ error: { code: 'request_header_fields_too_large', message: expect.any(String) as string, request_id: requestId } });
  expect(await recordOf(requestId)).toMatchObject({ request_id: requestId, method: 'GET', path: '/v1/models', status: 431, error_code: 'request_header_fields_too_large', key: null });
  expect((await models(0)).status).toBe(200);
  expect(cli.child.exitCode).toBeNull();
});

it('answers 431 in the text endpoints’ own error shapes', async () => {
  const refused = await fetch(`${cli.base}/v1/messages`, {
    method: 'POST',
    headers: { 'X-Padding': 'a'.repeat(6_000), 'Content-Type': 'application/json', Connection: 'close' },
    body: '{}',
  });
  expect(refused.status).toBe(431);
  const requestId = refused.headers.get('x-request-id') ?? '';
  expect(refused.headers.get('request-id')).toBe(requestId);
  expect(await refused.json()).toMatchObject({ type: 'error', error: { type: 'request_header_fields_too_large', request_id: requestId } });
});

it('cuts a client that sends its headers too slowly with 408 after --headers-timeout-ms, with a request id, and records it', async () => {
  const slow = await raw(cli);
  const started = Date.now();
  // One header line every 50 ms: never idle, yet the headers never end.
  trickle(slow, ['GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\n', ...Array.from({ length: 200 }, (_, i) => `X-Line-${i}: a\r\n`)], 50);
  await within(20_000, slow.closed, 'the cut');
  expect(Date.now() - started).toBeGreaterThanOrEqual(280);
  // The request line came in an earlier packet than the one being read: the path is not known, so the body is
  // the general shape and the record names no method or path.
  const { body, requestId } = refusalOf(slow.received(), '408 Request Timeout');
  expect(body).toEqual({ error: { code: 'request_timeout', message: expect.any(String) as string, request_id: requestId } });
  expect(await recordOf(requestId)).toMatchObject({ request_id: requestId, status: 408, error_code: 'request_timeout', method: '', path: '' });
  // Clients that send their headers at once are served as before.
  const quick = await raw(cli);
  quick.socket.write(HEALTH);
  expect((await quick.answer()).head).toMatch(/^HTTP\/1\.1 200/);
});

it('answers a request that is not HTTP with 400 bad_request, a request id and a record', async () => {
  const bad = await raw(cli);
  bad.socket.write(`GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${DEMO_KEY}\r\nBad Header: x\r\n\r\n`);
  await within(20_000, bad.closed, 'the refusal');
  const { body, requestId } = refusalOf(bad.received(), '400 Bad Request');
  expect(body).toMatchObject({ error: { code: 'bad_request', request_id: requestId } });
  expect(await recordOf(requestId)).toMatchObject({ request_id: requestId, method: 'GET', path: '/v1/models', status: 400, error_code: 'bad_request' });
});

it('cuts a body sent too slowly with 408 after --request-timeout-ms, records the 408, but never cuts a stream that outlasts it', async () => {
  const started = Date.now();
  const res = await fetch(`${cli.base}/v1/chat/completions`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${DEMO_KEY}`, 'Content-Type': 'application/json', 'X-Emulator-Scenario': 'paced' },
    body: JSON.stringify({ model: 'svc-text-lite', messages: [{ role: 'user', content: 'Hello' }], stream: true }),
  });
  expect(res.status).toBe(200);
  const stream = await res.text();
  expect(Date.now() - started).toBeGreaterThan(1_000);
  expect(stream.endsWith('data: [DONE]\n\n')).toBe(true);
  expect(stream).toContain('"finish_reason":"stop"');

  const upload = await raw(cli);
  const body = JSON.stringify({ model: 'video-gen-2.0-fast', input: { prompt: 'a cat surfing' } });
  const head = `POST /v1/tasks HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${DEMO_KEY}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
  // A byte every 50 ms: the body would take over three seconds.
  trickle(upload, [head, ...body], 50);
  await within(20_000, upload.closed, 'the cut');
  const refusal = refusalOf(upload.received(), '408 Request Timeout');
  expect(refusal.body).toEqual({ error: { code: 'request_timeout', message: expect.any(String) as string, request_id: refusal.requestId } });
  // The app had the request: its record knows the key, and says what the client got.
  const record = await recordOf(refusal.requestId);
  expect(record).toMatchObject({ method: 'POST', path: '/v1/tasks', status: 408, error_code: 'request_timeout', key: DEMO_KEY });
});

it('closes an idle kept-alive connection after --keep-alive-timeout-ms, and announces it', async () => {
  const connection = await raw(cli);
  connection.socket.write(HEALTH);
  const first = await connection.answer();
  expect(first.head).toMatch(/^HTTP\/1\.1 200/);
  expect(first.head).toMatch(/\r\nKeep-Alive: timeout=1$/im);
  // Kept alive: a second request on the same connection is answered.
  connection.socket.write(HEALTH);
  expect((await connection.answer()).head).toMatch(/^HTTP\/1\.1 200/);
  const idleSince = Date.now();
  // Node's default, 5 s, would miss the deadline.
  await within(4_000, connection.closed, 'closing the idle connection');
  expect(Date.now() - idleSince).toBeGreaterThanOrEqual(900);
});

it('closes connections over --max-connections without an answer while every one is busy, and takes new ones once there is room', async () => {
  const capped = await startCli(['--memory', '--max-connections', '2']);
  const held = [await raw(capped), await raw(capped)];
  // Each with a request in flight (an upload whose body is still to come), so neither gives way to the third
  // (an idle one would: test/cli/idle-connections.test.ts).
  for (const connection of held) {
    connection.socket.write(`POST /v1/tasks HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${DEMO_KEY}\r\nContent-Type: application/json\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n`);
    expect((await connection.answer()).head).toMatch(/^HTTP\/1\.1 100/);
  }
  const third = await raw(capped);
  third.socket.write(HEALTH);
  await within(20_000, third.closed, 'closing the connection over the cap');
  expect(third.received()).toBe('');

  held[0]?.socket.destroy();
  await held[0]?.closed;
  // The server counts the closed connection out on its own turn: ask until it has.
  const served = async (): Promise<string> => {
    for (;;) {
      const next = await raw(capped);
      next.socket.write(HEALTH);
      const answer = await next.answer().catch(() => null);
      next.socket.destroy();
      if (answer) return answer.head;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  expect(await within(20_000, served(), 'a connection once there is room')).toMatch(/^HTTP\/1\.1 200/);
});

it('takes every limit and the grace period as a flag, an environment variable or a config key, flags first', async () => {
  const flags = parseStartOptions(
    ['--max-header-bytes', '8192', '--headers-timeout-ms', '1000', '--request-timeout-ms', '0', '--keep-alive-timeout-ms', '0', '--max-connections', '50', '--shutdown-grace-ms', '0'],
    { SVC_EMULATOR_MAX_HEADER_BYTES: '4096' },
  );
  expect(flags.limits).toEqual({ maxHeaderBytes: 8192, headersTimeoutMs: 1000, requestTimeoutMs: 0, keepAliveTimeoutMs: 0, maxConnections: 50 });
  expect(flags.shutdownGraceMs).toBe(0);
  // The connection cap not given is the default one, below the open-file limit (test/cli/connections.test.ts).
  const defaultCap = connectionBudget(openFileLimit(), 256).cap;
  const env = parseStartOptions([], { SVC_EMULATOR_REQUEST_TIMEOUT_MS: '2000', SVC_EMULATOR_SHUTDOWN_GRACE_MS: '2500' });
  expect(env.limits).toEqual({ requestTimeoutMs: 2000, maxConnections: defaultCap });
  expect(env.shutdownGraceMs).toBe(2500);
  expect(parseStartOptions([], {}).limits).toEqual({ maxConnections: defaultCap });
  const dir = await mkdtemp(join(tmpdir(), 'svc-limits-'));
  try {
    const file = join(dir, 'emulator.yaml');
    await writeFile(file, 'keep-alive-timeout-ms: 1500\nmax-connections: 10\nshutdown-grace-ms: 3000\n');
    const fromFile = parseStartOptions(['--config', file], { SVC_EMULATOR_MAX_CONNECTIONS: '20' });
    expect(fromFile.limits).toEqual({ keepAliveTimeoutMs: 1500, maxConnections: 20 });
    expect(fromFile.shutdownGraceMs).toBe(3000);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  for (const flag of ['--max-header-bytes', '--headers-timeout-ms', '--request-timeout-ms', '--keep-alive-timeout-ms', '--max-connections', '--shutdown-grace-ms']) {
    expect(START_HELP).toContain(flag);
  }
});

it.each([
  [['--headers-timeout-ms=-1'], 'a whole number, 0 or more'],
  [['--keep-alive-timeout-ms', '1.5'], 'a whole number, 0 or more'],
  [['--max-connections', '0'], 'a positive whole number'],
  [['--max-header-bytes', 'big'], 'a positive whole number'],
  [['--headers-timeout-ms', '5000', '--request-timeout-ms', '1000'], 'must not be longer than the request timeout'],
])('refuses %j', (args, message) => {
  expect(() => parseStartOptions(args, {})).toThrow(message);
});

it('defaults to node’s header size and keep-alive, a minute for headers, ten minutes for a whole request and, in-process, no connection cap', () => {
  expect(resolveLimits()).toEqual(DEFAULT_SERVER_LIMITS);
  expect(DEFAULT_SERVER_LIMITS).toEqual({ maxHeaderBytes: 16_384, headersTimeoutMs: 60_000, requestTimeoutMs: 600_000, keepAliveTimeoutMs: 5_000, maxConnections: null });
  const server = createLimitedServer(() => undefined, resolveLimits());
  expect(server).toMatchObject({ maxHeaderSize: 16_384, headersTimeout: 60_000, requestTimeout: 600_000, keepAliveTimeout: 5_000 });
  expect(server.maxConnections).toBeFalsy();
  // A shorter request timeout shortens the headers' default with it.
  expect(resolveLimits({ requestTimeoutMs: 20_000 }).headersTimeoutMs).toBe(20_000);
  expect(resolveLimits({ requestTimeoutMs: 0 }).headersTimeoutMs).toBe(60_000);
});
