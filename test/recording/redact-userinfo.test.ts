import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { curlOf } from '../../src/wire/index.ts';
import { createEmulator } from '../../src/index.ts';
import type { Emulator } from '../../src/index.ts';
import { createProxy } from '../../src/proxy/index.ts';
import { createRecorder, redactBody, redactHeaders, redactSecrets } from '../../src/recording/index.ts';
import type { Har } from '../../src/recording/index.ts';

// A password in an address (`https://user:secret@host/hook`, RFC 3986's userinfo) is a credential wherever the
// address is written: in a body, a header, a query value (also URL-encoded or JSON-escaped) and a curl line. The
// userinfo is replaced whole by the recording's marker, so the host and path stay and the address still parses.

const HOOK = 'https://user:secret@hooks.example.com/hook';
const HIDDEN = 'https://[redacted]@hooks.example.com/hook';

it.each([
  ['a user and password', HOOK, HIDDEN],
  ['a user alone (a token as the user name)', 'https://ghp_Tok3n@github.com/o/r.git', 'https://[redacted]@github.com/o/r.git'],
  ['an empty user and a password', 'redis://:secret@cache.example:6379/0', 'redis://[redacted]@cache.example:6379/0'],
  ['a password with an @ left unencoded', 'https://user:p@ss@h.example/x', 'https://[redacted]@h.example/x'],
  ['a percent-encoded password', 'https://user:p%40ss%3A1@h.example/x', 'https://[redacted]@h.example/x'],
  ['any scheme', 'postgres://app:secret@db.example:5432/main', 'postgres://[redacted]@db.example:5432/main'],
  ['an IPv6 host', 'http://user:secret@[::1]:8080/x', 'http://[redacted]@[::1]:8080/x'],
  ['a URL-encoded address in a query value', `/v1/x?cb=${encodeURIComponent(HOOK)}&n=1`, '/v1/x?cb=https%3A%2F%2F[redacted]%40hooks.example.com%2Fhook&n=1'],
  ['a lower-case URL-encoded address', '?cb=https%3a%2f%2fuser%3asecret%40h.example%2fx', '?cb=https%3a%2f%2f[redacted]%40h.example%2fx'],
  ['a JSON-escaped address (\\/)', '"https:\\/\\/user:secret@h.example\\/hook"', '"https:\\/\\/[redacted]@h.example\\/hook"'],
  ['a JSON-escaped @ (\\u0040)', '"https://user:secret\\u0040h.example/hook"', '"https://[redacted]\\u0040h.example/hook"'],
  ['two addresses in one text', 'a https://u:s1@h1.example/x and http://v:s2@h2.example/y', 'a https://[redacted]@h1.example/x and http://[redacted]@h2.example/y'],
  ['an address in a Link header', `<${HOOK}>; rel="next"`, `<${HIDDEN}>; rel="next"`],
])('redactSecrets hides the userinfo of %s', (_name, text, expected) => {
  expect(redactSecrets(text)).toEqual({ text: expected, changed: true });
  expect(redactSecrets(expected)).toEqual({ text: expected, changed: false });
});

it.each([
  ['an @ in the path', 'https://h.example/users/@me/x'],
  ['an @ in the query', 'https://h.example/x?mail=a@b.example'],
  ['an address followed by an e-mail address in prose', 'see https://h.example, or write to me@h.example'],
  ['an IPv6 host without userinfo', 'http://[::1]:8080/x'],
  ['an e-mail address', 'mailto:someone@h.example'],
])('redactSecrets leaves %s as it was', (_name, text) => {
  expect(redactSecrets(text)).toEqual({ text, changed: false });
});

it('hides the userinfo in header values and in request and response bodies, JSON and event streams', () => {
  expect(redactHeaders([{ name: 'Location', value: HOOK }])).toEqual({ headers: [{ name: 'Location', value: HIDDEN }], redacted: ['secret'] });
  for (const side of ['request', 'response'] as const) {
    for (const keepContent of [true, false]) {
      const json = redactBody({ route: 'tasks', side, text: JSON.stringify({ model: 'm', webhook_url: HOOK }).replaceAll('/', '\\/'), mimeType: 'application/json', keepContent });
      expect(json.text).toBe(JSON.stringify({ model: 'm', webhook_url: HIDDEN }));
      expect(json.redacted).toContain('secret');
    }
  }
  const sse = redactBody({ route: null, side: 'response', text: `event: x\ndata: {"url":"${HOOK}"}\n\n`, mimeType: 'text/event-stream', keepContent: true });
  expect(sse.text).toBe(`event: x\ndata: {"url":"${HIDDEN}"}\n\n`);
});

it('a curl line shows no userinfo in the address, the headers or the body', () => {
  const line = curlOf('https://api.example.com', {
    method: 'POST',
    path: `/v1/tasks?cb=${encodeURIComponent(HOOK)}`,
    status: 200,
    headers: new Headers(),
    text: '',
    json: undefined,
    requestId: null,
    events: [],
    requestHeaders: { 'x-callback': HOOK, 'content-type': 'application/json' },
    // As a JSON encoder that escapes slashes writes it, for the second address.
    requestBody: `{"webhook_url":"${HOOK}","alt":"${HOOK.replaceAll('/', '\\/')}"}`,
  });
  expect(line).not.toContain('secret');
  expect(line).toBe(
    `curl -sS -X POST 'https://api.example.com/v1/tasks?cb=https%3A%2F%2F[redacted]%40hooks.example.com%2Fhook' -H 'x-callback: ${HIDDEN}' -H 'content-type: application/json' --data-raw '{"webhook_url":"${HIDDEN}","alt":"${HIDDEN.replaceAll('/', '\\/')}"}'`,
  );
});

let emulator: Emulator;
let direct: string;
let key: string;

beforeAll(async () => {
  emulator = await createEmulator({ clock: 'manual', adminToken: 'userinfo-admin', allowInsecureWebhooks: true, log: () => undefined });
  direct = await emulator.listen(0);
  const control = async (path: string, body: object): Promise<Record<string, unknown>> =>
    (await (await fetch(`${direct}${path}`, { method: 'POST', headers: { Authorization: 'Bearer userinfo-admin', 'Content-Type': 'application/json' }, body: JSON.stringify(body) })).json()) as Record<string, unknown>;
  const account = await control('/_emulator/accounts', { points: '1000.000' });
  key = String((await control(`/_emulator/accounts/${String(account['id'])}/keys`, {}))['key']);
});
afterAll(() => emulator.close());

it('a proxy run with --record: a callback address with a password leaves no trace of the password in the HAR file', async () => {
  const dir = join(mkdtempSync(join(tmpdir(), 'svc-userinfo-')), 'out');
  const recorder = createRecorder({ dir, keepContent: false, upstream: direct });
  const proxy = createProxy({ upstream: direct, log: () => undefined, onExchange: recorder.onExchange });
  const url = await proxy.listen(0);
  try {
    const headers = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', 'X-Callback': HOOK };
    const submitted = await fetch(`${url}/v1/tasks`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ model: 'social-notes-data', input: { mode: 'note', note: 'https://notes.example.com/n/1', agree: true }, webhook_url: HOOK }),
    });
    expect(submitted.status).toBe(200);
    const task = (await submitted.json()) as { id: string };
    expect((await fetch(`${url}/v1/tasks/${task.id}?cb=${encodeURIComponent(HOOK)}`, { headers })).status).toBe(200);
  } finally {
    await proxy.close();
  }
  const [file] = await recorder.close();
  const raw = readFileSync(file ?? '', 'utf8');
  const har = JSON.parse(raw) as Har;
  expect(har.log.entries).toHaveLength(2);
  // The only `secret` left is the word for what was redacted: in `_svcEmulator.redacted` and the file's comment.
  expect(raw.replaceAll('"secret"', '').replace('secrets left out', '')).not.toMatch(/secret/i);
  const [submit, poll] = har.log.entries;
  expect(JSON.parse(submit?.request.postData?.text ?? '{}')).toMatchObject({ webhook_url: HIDDEN });
  expect(submit?.request.headers).toContainEqual({ name: 'X-Callback', value: HIDDEN });
  expect(submit?._svcEmulator?.redacted).toContain('secret');
  expect(poll?.request.queryString).toEqual([{ name: 'cb', value: HIDDEN }]);
});
