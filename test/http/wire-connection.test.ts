import { connect } from 'node:net';
import type { Socket } from 'node:net';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { createEmulator } from '../../src/index.ts';
import type { Emulator } from '../../src/index.ts';

// Text streams and the connection they come on, read byte for byte from raw sockets to a listening emulator: the
// `Connection` header a stream answers with is the one the client asked for, a connection the client asked to
// close is closed after the stream, and a kept-alive connection goes on serving whole answers after a stream.
// @see reference "Streaming", "Common request headers" (X-Request-Id on every /v1 response), "Errors"

const DEMO_KEY = 'sk-emulator-demo';
const REQUEST_ID = /^req_[a-z0-9]{24}$/;
const PROMPT = 'Explain in a few words how a plan works best.';

let emulator: Emulator;
let port: number;
const sockets: Socket[] = [];
beforeEach(async () => {
  emulator = await createEmulator({ clock: 'manual', adminToken: 'x', log: () => undefined });
  port = Number(new URL(await emulator.listen(0)).port);
});
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await emulator.close();
});

const FORMATS = {
  chat: { path: '/v1/chat/completions', body: { model: 'svc-text-pro', messages: [{ role: 'user', content: PROMPT }] }, last: 'data: [DONE]\n\n' },
  responses: { path: '/v1/responses', body: { model: 'svc-text-pro', input: PROMPT }, last: '"type":"response.completed"' },
  messages: {
    path: '/v1/messages',
    body: { model: 'svc-text-pro', max_tokens: 64, messages: [{ role: 'user', content: PROMPT }] },
    last: '"type":"message_stop"',
  },
} as const;
type FormatName = keyof typeof FORMATS;
const FORMAT_NAMES = Object.keys(FORMATS) as FormatName[];

interface Answer {
  status: number;
  /** Header names in lower case; a repeated header joined with ', '. */
  headers: Record<string, string>;
  body: string;
}

/** A raw HTTP/1.x connection: write requests, read whole answers (Content-Length, chunked, or to the close). */
interface Raw {
  send(request: string): void;
  answer(): Promise<Answer>;
  /** Resolves once the server has closed its side (end of stream or close). */
  ended: Promise<void>;
  /** Everything received, as text. */
  received(): string;
}

async function open(): Promise<Raw> {
  const socket = connect(port, '127.0.0.1');
  sockets.push(socket);
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  let buffer = Buffer.alloc(0);
  let all = '';
  let done = false;
  const wakers = new Set<() => void>();
  const wake = (): void => {
    for (const w of [...wakers]) w();
  };
  socket.on('data', (chunk: Buffer) => {
    buffer = Buffer.concat([buffer, chunk]);
    all += chunk.toString('latin1');
    wake();
  });
  socket.on('error', () => undefined);
  const ended = new Promise<void>((resolve) => {
    const end = (): void => {
      done = true;
      wake();
      resolve();
    };
    socket.once('end', end);
    socket.once('close', end);
  });

  /** One answer from the start of `buffer`, or null until all of it has arrived. */
  const take = (): { answer: Answer; used: number } | null => {
    const headEnd = buffer.indexOf('\r\n\r\n');
    if (headEnd < 0) return null;
    const [statusLine = '', ...lines] = buffer.subarray(0, headEnd).toString('latin1').split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim();
      headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
    }
    const status = Number(statusLine.split(' ')[1]);
    let at = headEnd + 4;
    if (headers['transfer-encoding']?.toLowerCase() === 'chunked') {
      const parts: Buffer[] = [];
      for (;;) {
        const lineEnd = buffer.indexOf('\r\n', at);
        if (lineEnd < 0) return null;
        const size = parseInt(buffer.subarray(at, lineEnd).toString('latin1'), 16);
        if (size === 0) {
          // No trailers are sent: the last chunk is followed by one blank line.
          if (buffer.length < lineEnd + 4) return null;
          return { answer: { status, headers, body: Buffer.concat(parts).toString('utf8') }, used: lineEnd + 4 };
        }
        if (buffer.length < lineEnd + 2 + size + 2) return null;
        parts.push(buffer.subarray(lineEnd + 2, lineEnd + 2 + size));
        at = lineEnd + 2 + size + 2;
      }
    }
    if (headers['content-length'] !== undefined) {
      const length = Number(headers['content-length']);
      if (buffer.length < at + length) return null;
      return { answer: { status, headers, body: buffer.subarray(at, at + length).toString('utf8') }, used: at + length };
    }
    // Neither: the body runs to the end of the connection.
    if (!done) return null;
    return { answer: { status, headers, body: buffer.subarray(at).toString('utf8') }, used: buffer.length };
  };

  const answer = (): Promise<Answer> =>
    new Promise((resolve, reject) => {
      const look = (): void => {
        const taken = take();
        if (taken) {
          wakers.delete(look);
          buffer = buffer.subarray(taken.used);
          resolve(taken.answer);
        } else if (done) {
          wakers.delete(look);
          reject(new Error(`the connection ended before a whole answer: ${JSON.stringify(all)}`));
        }
      };
      wakers.add(look);
      look();
    });
  return { send: (request) => socket.write(request), answer, ended, received: () => all };
}

function streamRequest(format: FormatName, options: { connection?: string; version?: string; scenario?: string } = {}): string {
  const body = JSON.stringify({ ...FORMATS[format].body, stream: true });
  return [
    `POST ${FORMATS[format].path} HTTP/${options.version ?? '1.1'}`,
    'Host: 127.0.0.1',
    `Authorization: Bearer ${DEMO_KEY}`,
    'Content-Type: application/json',
    `Content-Length: ${Buffer.byteLength(body)}`,
    ...(options.connection ? [`Connection: ${options.connection}`] : []),
    ...(options.scenario ? [`X-Emulator-Scenario: ${options.scenario}`] : []),
    '',
    body,
  ].join('\r\n');
}

const getRequest = (path: string, extra: string[] = []): string =>
  [`GET ${path} HTTP/1.1`, 'Host: 127.0.0.1', `Authorization: Bearer ${DEMO_KEY}`, ...extra, '', ''].join('\r\n');

function expectStream(answer: Answer, format: FormatName): void {
  expect(answer.status).toBe(200);
  expect(answer.headers['content-type']).toMatch(/^text\/event-stream/);
  expect(answer.headers['x-request-id']).toMatch(REQUEST_ID);
  expect(answer.body).toContain(FORMATS[format].last);
}

/** A whole general error answer: the documented body, its request id the X-Request-Id header. */
function expectGeneralError(answer: Answer, status: number, code: string): void {
  expect(answer.status).toBe(status);
  expect(answer.headers['x-request-id']).toMatch(REQUEST_ID);
  expect(answer.headers['content-type']).toMatch(/^application\/json/);
  expect(JSON.parse(answer.body)).toEqual({ error: { code, message: expect.any(String), request_id: answer.headers['x-request-id'] } });
}

const within = <T>(ms: number, promise: Promise<T>, what: string): Promise<T> =>
  Promise.race([promise, new Promise<T>((_resolve, reject) => setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms))]);

it.each(FORMAT_NAMES)('answers a %s stream asked for with Connection: close with Connection: close, and closes the connection after it', async (format) => {
  const raw = await open();
  raw.send(streamRequest(format, { connection: 'close' }));
  const answer = await raw.answer();
  expectStream(answer, format);
  expect(answer.headers['connection']).toBe('close');
  await within(5_000, raw.ended, 'the server closing the connection');
  // Nothing after the stream: no bare 400 for a request the client never sent.
  expect(raw.received()).not.toMatch(/HTTP\/1\.1 400/);
});

it.each(FORMAT_NAMES)('answers a %s stream to an HTTP/1.0 client (no keep-alive asked) with Connection: close, and closes the connection', async (format) => {
  const raw = await open();
  raw.send(streamRequest(format, { version: '1.0' }));
  await within(5_000, raw.ended, 'the server closing the connection');
  const answer = await raw.answer();
  expectStream(answer, format);
  expect(answer.headers['connection']).toBe('close');
});

const KEPT_ALIVE_CASES = FORMAT_NAMES.flatMap((format) => [
  [format, 'a whole stream', undefined],
  [format, 'a stream cut by a mid-stream error', 'text-service-unavailable-midstream'],
] as const);

it.each(KEPT_ALIVE_CASES)('keeps serving whole answers on a kept-alive connection after %s (%s)', async (format, _name, scenario) => {
  const raw = await open();
  raw.send(streamRequest(format, { connection: 'keep-alive', ...(scenario ? { scenario } : {}) }));
  const first = await raw.answer();
  expect(first.status).toBe(200);
  expect(first.headers['x-request-id']).toMatch(REQUEST_ID);
  expect(first.headers['connection']).toBe('keep-alive');
  // An error, a success and another stream on the same connection: each a whole answer with its own request id.
  raw.send(getRequest('/v1/tasks/T000000000000AAAAAA'));
  const missing = await raw.answer();
  expectGeneralError(missing, 404, 'not_found');
  raw.send(getRequest('/v1/tasks?limit=1'));
  const listed = await raw.answer();
  expect(listed.status).toBe(200);
  expect(listed.headers['x-request-id']).toMatch(REQUEST_ID);
  expect(JSON.parse(listed.body)).toMatchObject({ object: 'list' });
  // Without a Connection header an HTTP/1.1 connection is kept alive too.
  raw.send(streamRequest(format));
  const again = await raw.answer();
  expectStream(again, format);
  expect(again.headers['connection']).toBe('keep-alive');
  // The last request asks to close: its answer says so and the connection closes after it.
  raw.send(getRequest('/v1/nowhere', ['Connection: close']));
  const last = await raw.answer();
  expectGeneralError(last, 404, 'not_found');
  expect(last.headers['connection']).toBe('close');
  await within(5_000, raw.ended, 'the server closing the connection');
  const ids = [first, missing, listed, again, last].map((a) => a.headers['x-request-id']);
  expect(new Set(ids).size).toBe(ids.length);
  expect(raw.received()).not.toMatch(/HTTP\/1\.1 400/);
});

it('answers requests sent together on one kept-alive connection in order, a stream among them', async () => {
  const raw = await open();
  raw.send(getRequest('/v1/tasks/nope') + streamRequest('chat') + getRequest('/v1/nowhere'));
  expectGeneralError(await raw.answer(), 404, 'not_found');
  expectStream(await raw.answer(), 'chat');
  expectGeneralError(await raw.answer(), 404, 'not_found');
});
