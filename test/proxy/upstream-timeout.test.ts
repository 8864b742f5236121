import { createServer } from 'node:http';
import { createServer as createTcpServer } from 'node:net';
import type { AddressInfo, Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { expect, it } from 'vitest';
import { parseProxyOptions } from '../../src/cli/proxy.ts';
import { PROXY_HELP } from '../../src/cli/help.ts';
import { PROXY_CHECKS, proxyJunitXml } from '../../src/proxy/index.ts';
import type { Deviation } from '../../src/proxy/index.ts';
import { spawnCommand } from '../support/command.ts';
import { closedPort } from '../support/ports.ts';
import { closedAfterEach, listenLocal, startProxy } from '../support/proxy.ts';

// An upstream that takes the connection and the request and never answers: the proxy gives up on it after its
// upstream timeout (here 300 ms of real time), answers the client itself, and reports the upstream. An upstream
// that answers in time, or starts a stream and then pauses, is never cut.

const TIMEOUT_MS = 300;
/** How long a test waits for the proxy's own answer before calling it a hang. */
const CLIENT_PATIENCE_MS = 5_000;
const REQUEST_ID = /^req_[a-z0-9]{24}$/;
const NOTES = { model: 'social-notes-data', input: { mode: 'note', note: 'https://notes.example.com/n/timeout', agree: true } };
const CHAT = { model: 'svc-text-pro', messages: [{ role: 'user', content: 'hi' }] };
const MESSAGE = { model: 'svc-text-pro', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] };
const FIRST = 'data: {"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}\n\n';
const REST = 'data: {"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n';

const running = closedAfterEach();

/** A TCP server that accepts every connection, reads what comes and never writes: its address and its sockets. */
async function silentUpstream(): Promise<{ url: string; sockets: Socket[] }> {
  const sockets: Socket[] = [];
  const server = createTcpServer((socket) => {
    sockets.push(socket);
    socket.resume();
  });
  running.push({
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, sockets };
}

const closed = (socket: Socket): Promise<void> => new Promise((resolve) => (socket.destroyed ? resolve() : socket.once('close', () => resolve())));

async function listed(url: string): Promise<Deviation[]> {
  const res = await fetch(`${url}/_emulator/proxy/deviations`);
  return ((await res.json()) as { data: Deviation[] }).data;
}

/** The error body each endpoint group answers with, for one code and request id. */
const errorShapes = {
  general: (code: string, id: string) => ({ error: { code, message: expect.any(String) as unknown, request_id: id } }),
  openai: (code: string, id: string) => ({ error: { message: expect.any(String) as unknown, type: code, code, param: null, request_id: id } }),
  messages: (code: string, id: string) => ({ type: 'error', error: { type: code, message: expect.any(String) as unknown, code, request_id: id } }),
};

it.each([
  ['the task endpoints', 'general', '/v1/tasks', NOTES],
  ['chat completions', 'openai', '/v1/chat/completions', CHAT],
  ['messages', 'messages', '/v1/messages', MESSAGE],
] as const)('an upstream that never answers %s: 504 upstream_timeout in the group shape with X-Request-Id, after the timeout, listed as a deviation', async (_name, group, path, body) => {
  const upstream = await silentUpstream();
  const lines: string[] = [];
  const { url } = await startProxy(upstream.url, running, lines, { upstreamTimeoutMs: TIMEOUT_MS });

  const started = performance.now();
  const res = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { Authorization: 'Bearer sk-timeoutTestKey0123456789', 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(CLIENT_PATIENCE_MS),
  });
  const text = await res.text();
  const waited = performance.now() - started;

  expect(res.status).toBe(504);
  expect(waited).toBeGreaterThanOrEqual(TIMEOUT_MS - 5);
  expect(waited).toBeLessThan(CLIENT_PATIENCE_MS / 2);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  const id = res.headers.get('x-request-id') ?? '';
  expect(id).toMatch(REQUEST_ID);
  if (group === 'messages') expect(res.headers.get('request-id')).toBe(id);
  expect(JSON.parse(text)).toEqual(errorShapes[group]('upstream_timeout', id));
  // The proxy gave up on the upstream request: the connection is closed.
  expect(upstream.sockets).toHaveLength(1);
  await closed(upstream.sockets[0] as Socket);

  const data = await listed(url);
  expect(data).toEqual([
    {
      check: 'wire.upstream.timeout',
      method: 'POST',
      path,
      status: 504,
      request_id: id,
      message: `no status line from the upstream within ${TIMEOUT_MS} ms`,
      curl: `curl -sS -X POST '${upstream.url}${path}' -H 'authorization: Bearer sk-REDACTED' -H 'content-type: application/json' --data-raw '${JSON.stringify(body)}'`,
    },
  ]);
  expect(lines).toEqual([`deviation wire.upstream.timeout POST ${path} 504 ${id}: no status line from the upstream within ${TIMEOUT_MS} ms`]);
});

it('the JUnit report has a case for the upstream timeout, failing with each timed-out request', async () => {
  const upstream = await silentUpstream();
  const { proxy, url } = await startProxy(upstream.url, running, [], { upstreamTimeoutMs: TIMEOUT_MS });
  expect((await fetch(`${url}/v1/tasks/T000000000000SILENT`, { signal: AbortSignal.timeout(CLIENT_PATIENCE_MS) })).status).toBe(504);
  await proxy.settled();
  expect(PROXY_CHECKS).toContain('wire.upstream.timeout');
  const xml = proxyJunitXml({ upstream: proxy.upstream, exchanges: proxy.exchanges(), deviations: proxy.deviations() });
  expect(xml).toMatch(/<testcase classname="proxy" name="wire\.upstream\.timeout"><failure message="1 deviation; first: no status line from the upstream within 300 ms"/);
  expect(xml).toContain('GET /v1/tasks/T000000000000SILENT answered 504');
  expect(xml).toMatch(/<testcase classname="proxy" name="wire\.status\.no-5xx"\/>/);
});

it('an upstream that answers in time, or starts a stream and pauses past the timeout, is passed on whole', async () => {
  // A longer timeout than the other tests': the quick answer must beat it even when a busy machine stalls this
  // process for a while; the stream's pause still outlasts it.
  const timeoutMs = 1_000;
  const server = createServer((req, res) => {
    req.resume();
    if (req.url === '/v1/chat/completions') {
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      res.write(FIRST);
      setTimeout(() => res.end(REST), timeoutMs + 300);
      return;
    }
    res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"ok":true}');
  });
  const upstream = await listenLocal(server, running);
  const { proxy, url } = await startProxy(upstream, running, [], { upstreamTimeoutMs: timeoutMs });

  const quick = await fetch(`${url}/v1/tasks/T000000000000QUICK1`);
  expect([quick.status, await quick.text()]).toEqual([200, '{"ok":true}']);
  const stream = await fetch(`${url}/v1/chat/completions`, { method: 'POST', body: JSON.stringify({ ...CHAT, stream: true }), signal: AbortSignal.timeout(CLIENT_PATIENCE_MS) });
  expect([stream.status, await stream.text()]).toEqual([200, FIRST + REST]);
  await proxy.settled();
  expect(proxy.deviations().filter((d) => d.check === 'wire.upstream.timeout')).toEqual([]);
});

it('an upstream that refuses the connection: 502 upstream_unreachable in the same shape, with X-Request-Id, and no timeout', async () => {
  const { url, lines } = await startProxy(`http://127.0.0.1:${await closedPort()}`, running, [], { upstreamTimeoutMs: TIMEOUT_MS });
  const res = await fetch(`${url}/v1/responses`, { method: 'POST', body: '{}', signal: AbortSignal.timeout(CLIENT_PATIENCE_MS) });
  expect(res.status).toBe(502);
  const id = res.headers.get('x-request-id') ?? '';
  expect(id).toMatch(REQUEST_ID);
  expect(await res.json()).toEqual(errorShapes.openai('upstream_unreachable', id));
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^proxy: POST \/v1\/responses: the upstream http:\/\/127\.0\.0\.1:\d+ did not answer \(/);
  expect(await listed(url)).toEqual([]);
});

it('--upstream-timeout-ms: 60000 by default, 0 for none, up to a day, else a usage error; shown in --help', () => {
  const base = ['--upstream', 'http://127.0.0.1:9'];
  expect(parseProxyOptions(base).upstreamTimeoutMs).toBe(60_000);
  expect(parseProxyOptions([...base, '--upstream-timeout-ms', '300']).upstreamTimeoutMs).toBe(300);
  expect(parseProxyOptions([...base, '--upstream-timeout-ms=0']).upstreamTimeoutMs).toBe(0);
  for (const bad of ['abc', '-1', '1.5', '', '86400001']) {
    expect(() => parseProxyOptions([...base, `--upstream-timeout-ms=${bad}`])).toThrow(`svc-emulator proxy: --upstream-timeout-ms ${bad === '' ? '""' : bad}: must be a whole number of milliseconds, 0-86400000 (0: no limit)`);
  }
  expect(PROXY_HELP).toMatch(/--upstream-timeout-ms N\s+real time the upstream has to send its status line \(default 60000; 0: no limit\)/);
});

it('svc-emulator proxy --upstream-timeout-ms 300 answers a silent upstream with 504', async () => {
  const upstream = await silentUpstream();
  const child = spawnCommand(['proxy', '--upstream', upstream.url, '--port', '0', '--upstream-timeout-ms', String(TIMEOUT_MS)]);
  running.push({ close: async () => void (child.exitCode === null && child.signalCode === null && child.kill('SIGKILL')) });
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      const found = /proxy listening on (http:\/\/\S+)/.exec(output);
      if (found) resolve(found[1] ?? '');
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => reject(new Error(`exited ${code} before listening:\n${output}`)));
  });
  const res = await fetch(`${url}/v1/tasks/T000000000000SILENT`, { signal: AbortSignal.timeout(CLIENT_PATIENCE_MS) });
  expect(res.status).toBe(504);
  expect(((await res.json()) as { error: { code: string } }).error.code).toBe('upstream_timeout');
}, 20_000);
