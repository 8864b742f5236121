import { connect } from 'node:net';
import type { Socket } from 'node:net';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { createEmulator } from '../../src/index.ts';
import type { Emulator } from '../../src/index.ts';

// Requests the listening server refuses before the app answers them (headers too large, too slow, not HTTP) get a
// whole answer like any other /v1 answer, a request id and its call record saying what the client got
// (issue 26, items 1 and 2). Raw sockets to an in-process emulator with small limits.
// @see reference "Conventions" (X-Request-Id on every /v1 response), "What the service does" (every request recorded)

const DEMO_KEY = 'sk-emulator-demo';

let emulator: Emulator;
let port: number;
const sockets: Socket[] = [];
beforeEach(async () => {
  emulator = await createEmulator({
    clock: 'manual',
    adminToken: 'x',
    log: () => undefined,
    limits: { maxHeaderBytes: 2048, headersTimeoutMs: 200, requestTimeoutMs: 300 },
  });
  port = Number(new URL(await emulator.listen(0)).port);
});
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await emulator.close();
});

/** A raw connection: everything it received, and a promise of the server's close. */
async function open(): Promise<{ socket: Socket; received: () => string; closed: Promise<void> }> {
  const socket = connect(port, '127.0.0.1');
  sockets.push(socket);
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  let text = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => (text += chunk));
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  return { socket, received: () => text, closed };
}

/** The newest record of `path`, once the answers of the turn are written. */
async function newestRecord(path: string): Promise<Record<string, unknown> | undefined> {
  await new Promise((resolve) => setImmediate(resolve));
  return emulator.internals.db.calls.page({ path }, 1, 0).rows[0] as Record<string, unknown> | undefined;
}

/** The answers on a connection, split by status line. */
const statusLines = (received: string): string[] => received.match(/HTTP\/1\.1 \d{3} [^\r]*/g) ?? [];

it('records a body cut by the request timeout as the 408 the client got, not as 200', async () => {
  const { socket, received, closed } = await open();
  socket.write(`POST /v1/tasks HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${DEMO_KEY}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"mod`);
  await closed;
  const record = await newestRecord('/v1/tasks');
  expect(record).toMatchObject({ method: 'POST', path: '/v1/tasks', status: 408, error_code: 'request_timeout', key: DEMO_KEY, account_id: 'acct_demo' });
  const requestId = String(record?.['request_id']);
  expect(statusLines(received())).toEqual(['HTTP/1.1 408 Request Timeout']);
  expect(received()).toMatch(new RegExp(`\r\nX-Request-Id: ${requestId}\r\n`, 'i'));
  expect(received()).toMatch(/\r\nConnection: close\r\n/i);
  expect(JSON.parse(received().split('\r\n\r\n')[1] ?? '')).toEqual({ error: { code: 'request_timeout', message: expect.any(String) as string, request_id: requestId } });
});

it('answers a text call whose body is cut in its endpoint’s error shape', async () => {
  const { socket, received, closed } = await open();
  socket.write(`POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${DEMO_KEY}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{`);
  await closed;
  const record = await newestRecord('/v1/chat/completions');
  expect(record).toMatchObject({ status: 408, error_code: 'request_timeout' });
  expect(JSON.parse(received().split('\r\n\r\n')[1] ?? '')).toMatchObject({
    error: { type: 'request_timeout', code: 'request_timeout', param: null, request_id: record?.['request_id'] },
  });
});

it('answers a kept-alive connection’s next request whose headers are too large with 431 after the first answer, and records it', async () => {
  const { socket, received, closed } = await open();
  socket.write(`GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${DEMO_KEY}\r\n\r\n`);
  await new Promise<void>((resolve) => socket.on('data', () => received().includes('"object"') && resolve()));
  socket.write(`GET /v1/pricing HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: ${'a'.repeat(4000)}\r\n\r\n`);
  await closed;
  expect(statusLines(received())).toEqual(['HTTP/1.1 200 OK', 'HTTP/1.1 431 Request Header Fields Too Large']);
  const record = await newestRecord('/v1/pricing');
  expect(record).toMatchObject({ method: 'GET', path: '/v1/pricing', status: 431, error_code: 'request_header_fields_too_large', key: null });
  expect(received()).toContain(`"request_id":"${String(record?.['request_id'])}"`);
});

it('does not answer twice when a request already answered (401) is too slow to send the rest of its body', async () => {
  const { socket, received, closed } = await open();
  socket.write('POST /v1/tasks HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{');
  await closed;
  expect(statusLines(received())).toEqual(['HTTP/1.1 401 Unauthorized']);
  expect(await newestRecord('/v1/tasks')).toMatchObject({ status: 401, error_code: 'invalid_api_key' });
});

it('answers headers too large on a path outside /v1 with a request id, and records nothing', async () => {
  const { socket, received, closed } = await open();
  socket.write(`GET /_emulator/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: ${'a'.repeat(4000)}\r\n\r\n`);
  await closed;
  expect(statusLines(received())).toEqual(['HTTP/1.1 431 Request Header Fields Too Large']);
  expect(received()).toMatch(/\r\nX-Request-Id: req_[a-z0-9]{24}\r\n/i);
  expect(emulator.internals.db.calls.page({}, 10, 0).rows).toEqual([]);
});
