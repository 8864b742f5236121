import { expect, it } from 'vitest';
import type { EndedExchange } from '../../src/wire/index.ts';
import { harEntry, isSecretHeader, redactBody, redactSecrets } from '../../src/recording/index.ts';

// Secrets written in the forms a wire carries them besides the plain one: JSON-escaped, URL-encoded, inside an
// address inside a query, in an event stream. None may reach a recording, with or without --keep-content.

const SECRET = 'Zq7Secret9Value';

it.each([
  ['a token in a URL-encoded callback address', `/v1/x?cb=https%3A%2F%2Fh.example%2Fhook%3Fa%3D1%26token%3D${SECRET}%26b%3D2`, `/v1/x?cb=https%3A%2F%2Fh.example%2Fhook%3Fa%3D1%26token%3D[redacted]%26b%3D2`],
  ['a JSON-escaped & before a token (Go writes \\u0026)', `"https://h/x?a=1\\u0026token=${SECRET}"`, '"https://h/x?a=1\\u0026token=[redacted]"'],
  ['a client secret', `?client_secret=${SECRET}&x=1`, '?client_secret=[redacted]&x=1'],
  ['a presigned address', `?X-Amz-Security-Token=${SECRET}&X-Amz-Signature=${SECRET}`, '?X-Amz-Security-Token=[redacted]&X-Amz-Signature=[redacted]'],
  ['a URL-encoded bearer token', `?auth_header=Bearer%20${SECRET}`, '?auth_header=[redacted]'],
  ['a form-encoded bearer token', `Bearer+${SECRET}`, '[redacted bearer token]'],
  ['a word that only contains key', '?keyword=lamp&monkey=1', '?keyword=lamp&monkey=1'],
])('redactSecrets replaces %s', (_name, text, expected) => {
  expect(redactSecrets(text).text).toBe(expected);
  expect(redactSecrets(expected).text).toBe(expected);
});

it.each([
  ['X-Authorization', true],
  ['x-ms-authorization-auxiliary', true],
  ['X_Auth_Token', true],
  ['x-ratelimit-remaining-tokens', false],
  ['content-type', false],
])('isSecretHeader(%s) is %s', (name, secret) => {
  expect(isSecretHeader(name)).toBe(secret);
});

it.each([
  ['application/json', `{"key":"sk\\u002d${SECRET}AbCd","hook":"https:\\/\\/h\\/x?a=1\\u0026token=${SECRET}","auth":"Bearer ${SECRET.slice(0, 4)}\\/${SECRET}"}`],
  ['text/event-stream', `event: x\ndata: {"secret":"whsec\\u005f${SECRET}"}\n\ndata: {"a":\ndata: "svs\\u005f${SECRET}"}\n\n`],
])('finds a secret the %s body writes with JSON escapes, content kept or not', (mimeType, text) => {
  for (const keepContent of [true, false]) {
    const done = redactBody({ route: null, side: 'response', text, mimeType, keepContent });
    expect(done.text).not.toContain(SECRET);
    expect(done.redacted).toContain('secret');
  }
});

it('leaves a body without a secret as it was, escapes and all', () => {
  const text = '{"url":"https:\\/\\/h\\/x?page=2","n":1}';
  expect(redactBody({ route: null, side: 'response', text, mimeType: 'application/json', keepContent: true })).toEqual({ text, redacted: [] });
});

it('leaves no secret in the recorded address or its decoded query, however deep the encoding', () => {
  const inner = encodeURIComponent(`https://h.example/hook?token=${SECRET}`);
  const path = `/v1/tasks?cb=${encodeURIComponent(`https://relay.example/?next=${inner}`)}&limit=5`;
  const ended = {
    exchange: { method: 'GET', path, status: 200, headers: new Headers(), text: '', json: undefined, requestId: null, events: [], requestHeaders: {}, requestBody: undefined },
    complete: true,
    upstream: 'http://upstream.example',
    startedMs: 0,
    firstByteMs: 1,
    endMs: 2,
    request: { rawHeaders: ['Host', 'proxy'], body: Buffer.alloc(0) },
    response: { statusMessage: 'OK', rawHeaders: [], decoded: Buffer.alloc(0), truncated: false },
  } satisfies EndedExchange;
  const { entry } = harEntry(ended, { keepContent: true });
  expect(JSON.stringify(entry)).not.toContain(SECRET);
  expect(entry.request.queryString.map((q) => q.name)).toEqual(['cb', 'limit']);
  expect(entry.request.queryString[1]?.value).toBe('5');
  expect(entry._svcEmulator?.redacted).toEqual(['secret']);
});

it('a curl line of the proxy or the suite carries no credential: key, signature, nonce, cookie, token in the address or the body', async () => {
  const { curlOf } = await import('../../src/wire/index.ts');
  const line = curlOf('https://api.example.com', {
    method: 'POST',
    path: `/v1/tasks?token=${SECRET}`,
    status: 200,
    headers: new Headers(),
    text: '',
    json: undefined,
    requestId: null,
    events: [],
    requestHeaders: { authorization: `Bearer sk-${SECRET}`, 'x-svc-signature': SECRET, 'x-svc-nonce': SECRET, cookie: `s=${SECRET}`, 'content-type': 'application/json' },
    requestBody: JSON.stringify({ webhook_url: `https://h.example/hook?token=${SECRET}`, metadata: { secret: `whsec_${SECRET}` } }),
  });
  expect(line).not.toContain(SECRET);
  expect(line).toContain("-H 'authorization: Bearer sk-REDACTED'");
  expect(line).toContain("-H 'x-svc-signature: [redacted]'");
  expect(line).toContain("-H 'content-type: application/json'");
});
