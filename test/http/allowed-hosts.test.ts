import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { parseStartOptions } from '../../src/cli/start-options.ts';
import { createEmulator } from '../../src/index.ts';
import type { Emulator } from '../../src/index.ts';
import { killAll, runCli, startCli } from '../support/cli.ts';
import { ADMIN_TOKEN, DEMO_KEY, START } from '../support/harness.ts';
import { responseProblems } from '../support/spec-check.ts';

// The guard against DNS rebinding (issue 36, item 2): a page of another site whose name is made to resolve to
// 127.0.0.1 reaches the emulator with its own name as Host, so every path (/v1, the control API, the dashboard,
// /files) refuses a Host the emulator does not answer, 421 host_not_allowed in the path's error shape, with a
// request id. Answered: localhost, 127.0.0.1, [::1] (any port), the address listened on, the public URL's host
// and the names of --allowed-hosts (or its environment variable).

let emulator: Emulator;
let base: string;
let port: number;
let fileUrl: string;
beforeAll(async () => {
  emulator = await createEmulator({ clock: 'manual', startTime: START, adminToken: ADMIN_TOKEN, log: () => undefined });
  base = await emulator.listen(0, '127.0.0.1');
  port = Number(new URL(base).port);
  fileUrl = (await (await post('/v1/files', { filename: 'a.txt', content: Buffer.from('a').toString('base64') })).json() as { url: string }).url;
});
afterAll(() => emulator.close());
afterEach(killAll);

const REBIND = 'rebind.example';

const post = (path: string, body: unknown): Promise<Response> =>
  fetch(`${base}${path}`, { method: 'POST', headers: { Authorization: `Bearer ${DEMO_KEY}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Record<string, unknown>;
}

/** A request to `at` (default the in-process emulator) with `host` as its Host header (node sends it as given). */
function send(method: string, path: string, host: string, at = port, body?: unknown): Promise<Answer> {
  const token = path.startsWith('/v1') ? DEMO_KEY : ADMIN_TOKEN;
  const text = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: at, method, path, headers: { Host: host, Authorization: `Bearer ${token}`, ...(text ? { 'Content-Type': 'application/json' } : {}) } }, (res) => {
      let data = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (data += chunk));
      res.on('end', () => {
        const json = (res.headers['content-type'] ?? '').includes('json');
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: json ? (JSON.parse(data) as Record<string, unknown>) : { text: data } });
      });
    });
    req.once('error', reject);
    req.end(text);
  });
}

/** The request id of an error answer, checked against the path's document and equal to X-Request-Id. */
function refusedRequestId(path: string, method: string, answer: Answer): string {
  const document = path.startsWith('/v1') ? 'service' : 'admin';
  expect(responseProblems(document, method, path, answer), `${method} ${path}`).toEqual([]);
  const error = answer.body['error'] as Record<string, unknown>;
  expect(answer.status, path).toBe(421);
  expect(error['code'], path).toBe('host_not_allowed');
  expect(error['message'], path).toContain('--allowed-hosts rebind.example');
  expect(error['request_id'], path).toBe(answer.headers['x-request-id']);
  return String(error['request_id']);
}

it('refuses a rebound Host on /v1, the control API, the dashboard and /files, in each path’s error shape, with a request id', async () => {
  const host = `${REBIND}:${port}`;
  const cases: [string, string, unknown?][] = [
    ['GET', '/v1/tasks'],
    ['POST', '/v1/tasks', { model: 'social-notes-data', input: { mode: 'note', note: 'n', agree: true } }],
    ['GET', '/v1/models'],
    ['POST', '/v1/chat/completions', { model: 'svc-text-pro', messages: [{ role: 'user', content: 'hi' }] }],
    ['POST', '/v1/messages', { model: 'svc-text-pro', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }],
    ['GET', '/_emulator/health'],
    ['POST', '/_emulator/clock/advance', { seconds: 3600 }],
    ['GET', '/_emulator/ui'],
    ['GET', new URL(fileUrl).pathname],
    ['GET', '/nowhere'],
  ];
  const clock = emulator.clock.now();
  for (const [method, path, body] of cases) {
    const answer = await send(method, path, host, port, body);
    refusedRequestId(path, method, answer);
    if (path === '/v1/chat/completions') expect((answer.body['error'] as Record<string, unknown>)['type']).toBe('host_not_allowed');
    if (path === '/v1/messages') {
      expect(answer.body['type']).toBe('error');
      expect(answer.headers['request-id']).toBe(answer.headers['x-request-id']);
    }
  }
  // Nothing was done: the clock stands where it stood, no task was made.
  expect(emulator.clock.now()).toBe(clock);
  expect(emulator.internals.db.tasks.count()).toBe(0);
});

it('leaves a call record of a refused /v1 request', async () => {
  const id = refusedRequestId('/v1/models', 'GET', await send('GET', '/v1/models', REBIND));
  const record = await send('GET', `/_emulator/records/${id}`, `127.0.0.1:${port}`);
  expect(record.status).toBe(200);
  expect(record.body).toMatchObject({ request_id: id, method: 'GET', path: '/v1/models', status: 421, error_code: 'host_not_allowed', key: null });
});

it('answers localhost, 127.0.0.1 and [::1] with or without a port, any port, in any case, where it refuses the rebound name; and a request naming no host', async () => {
  for (const path of ['/v1/models', '/_emulator/clock', '/_emulator/ui', new URL(fileUrl).pathname]) {
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, '127.0.0.1', 'localhost', `LocalHost:${port}`, 'localhost:1', '[::1]:8080']) {
      expect((await send('GET', path, host)).status, `${host} ${path}`).toBe(200);
    }
    expect((await send('GET', path, `${REBIND}:${port}`)).status, path).toBe(421);
  }
  // HTTP/1.0 without Host: no browser sends one.
  const socket = connect(port, '127.0.0.1');
  let text = '';
  socket.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
  socket.write('GET /_emulator/health HTTP/1.0\r\n\r\n');
  await new Promise((resolve) => socket.once('close', resolve));
  expect(text).toMatch(/^HTTP\/1\.1 200 /);
});

it('refuses a look-alike or malformed Host, and judges a target in absolute form by its own authority', async () => {
  for (const host of [`localhost.${REBIND}`, `127.0.0.1.${REBIND}:${port}`, 'localhost.', '127.0.0.2', `localhost:${port}x`, '::1']) {
    expect((await send('GET', '/_emulator/health', host)).status, host).toBe(421);
  }
  for (const path of ['/_emulator/health', '/v1/models']) {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
    socket.write(`GET http://${REBIND}${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${DEMO_KEY}\r\nConnection: close\r\n\r\n`);
    await new Promise((resolve) => socket.once('close', resolve));
    expect(text, path).toMatch(/^HTTP\/1\.1 421 /);
  }
});

it('answers the names of --allowed-hosts, and of SVC_EMULATOR_ALLOWED_HOSTS, started as a process', async () => {
  const [flag, env] = await Promise.all([
    startCli(['--memory', '--allowed-hosts', `${REBIND},other.example`]),
    startCli(['--memory'], { SVC_EMULATOR_ALLOWED_HOSTS: REBIND }),
  ]);
  for (const cli of [flag, env]) {
    for (const path of ['/_emulator/health', '/v1/models']) {
      expect((await send('GET', path, `${REBIND}:${cli.port}`, cli.port)).status, path).toBe(200);
    }
    expect((await send('GET', '/_emulator/health', `not-${REBIND}:${cli.port}`, cli.port)).status).toBe(421);
  }
});

it('will not listen on every address unless told which hosts to answer', async () => {
  const refused = await runCli(['start', '--memory', '--port', '0', '--host', '0.0.0.0']);
  expect(refused.code).toBe(2);
  expect(refused.stderr.trim()).toBe(
    "svc-emulator start: --host 0.0.0.0 listens on every address: name the hosts clients address it by with --allowed-hosts (emulator,192.168.1.20), or --allowed-hosts '*' to answer any (no guard against DNS rebinding)",
  );
  const bad = await runCli(['start', '--memory', '--port', '0', '--allowed-hosts', 'emulator:4010']);
  expect(bad.code).toBe(2);
  expect(bad.stderr.trim()).toBe('svc-emulator start: --allowed-hosts emulator:4010: emulator:4010 is not a host name without a port: give host names separated by commas (emulator,192.168.1.20,[fd00::2]), or * for any');

  // In-process: `*` answers any Host; the public URL's host is answered as the listening address is.
  const open = await createEmulator({ clock: 'manual', allowedHosts: ['*'], log: () => undefined });
  const published = await createEmulator({ clock: 'manual', publicUrl: 'http://files.example:9000', log: () => undefined });
  try {
    const at = Number(new URL(await open.listen(0, '127.0.0.1')).port);
    expect((await send('GET', '/_emulator/health', `${REBIND}:${at}`, at)).status).toBe(200);
    const other = Number(new URL(await published.listen(0, '127.0.0.1')).port);
    expect((await send('GET', '/_emulator/health', 'files.example:9000', other)).status).toBe(200);
    expect((await send('GET', '/_emulator/health', `${REBIND}:${other}`, other)).status).toBe(421);
  } finally {
    await Promise.all([open.close(), published.close()]);
  }
});

it('reads --allowed-hosts as lower-cased names from a flag, the environment or a config file list, and answers a --host given as a name', async () => {
  expect(parseStartOptions(['--host', '0.0.0.0', '--allowed-hosts', 'Emulator, 192.168.1.20,[FD00::2]'], {}).allowedHosts).toEqual(['emulator', '192.168.1.20', '[fd00::2]']);
  expect(parseStartOptions(['--host', '::'], { SVC_EMULATOR_ALLOWED_HOSTS: '*' }).allowedHosts).toEqual(['*']);
  expect(parseStartOptions(['--host', 'MyBox.lan'], {}).allowedHosts).toEqual(['mybox.lan']);
  expect(parseStartOptions([], {}).allowedHosts).toEqual([]);
  const dir = await mkdtemp(join(tmpdir(), 'svc-allowed-hosts-'));
  try {
    const file = join(dir, 'emu.yaml');
    await writeFile(file, 'host: 0.0.0.0\nallowed-hosts: [emulator, rebind.example]\n');
    expect(parseStartOptions(['--config', file], {}).allowedHosts).toEqual(['emulator', 'rebind.example']);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

it('serves the official openai SDK at 127.0.0.1 and at localhost', async () => {
  for (const host of ['127.0.0.1', 'localhost']) {
    const openai = new OpenAI({ baseURL: `http://${host}:${port}/v1`, apiKey: DEMO_KEY, maxRetries: 0 });
    const completion = await openai.chat.completions.create({ model: 'svc-text-pro', messages: [{ role: 'user', content: 'Say hi' }] });
    expect(completion.choices[0]?.message.content, host).toBeTruthy();
    expect((await openai.models.list()).data.length, host).toBeGreaterThan(0);
  }
});
