import { createHash, createHmac } from 'node:crypto';
import fc from 'fast-check';
import { DEMO_KEY, socialNote } from '../support/harness.ts';
import { params } from './bad-input/budget.ts';
import { CHAT_BODY, MALFORMED, MESSAGES_BODY, NON_OBJECTS, headersFor, nastyId, visible } from './bad-input/cases.ts';
import { ADMIN, TASK_MODELS, TEXT_MODELS, component } from './bad-input/documents.ts';
import { codeOf, exchange, expectError, expectNot, expectStatus, groupOf, isFilesPath } from './bad-input/exchange.ts';
import type { Body, Verb, World } from './bad-input/exchange.ts';
import { mutated } from './bad-input/mutations.ts';
import { fuzzPart } from './bad-input/part.ts';
import { fromSchema } from './bad-input/schema-arbitraries.ts';
import { asA, closeWorld, withWorld, world } from './bad-input/world.ts';

/**
 * Bad input, fuzzed, this part: POST /v1/files (JSON and multipart); the model and pricing reads; bodies
 * sent to operations that take none; paths and path parameters (traversal, malformed percent-encodings, case
 * variants, unknown paths, wrong methods); the request-signing headers at and past their limits.
 *
 * One of the suite's parts (test/fuzz/bad-input-*.fuzz.ts), which vitest runs on different workers; the shared
 * machinery, the budget and how to replay a failure are in test/fuzz/bad-input/.
 */

const { runs, fuzz, check, count } = fuzzPart('files-paths');

// ---------------------------------------------------------------------------------------------------------------
// POST /v1/files, JSON and multipart

const FILENAMES = ['a.png', 'clip.mp4', '../../etc/passwd', '..\\..\\boot.ini', '/etc/passwd', 'x.constructor', 'x.__proto__', 'x.toString', 'x.hasOwnProperty', '', '.', '..', 'a'.repeat(300), '日本.mp3', 'a.PNG', 'no-extension', 'x.json', 'x.'];
const filenameArb = fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...FILENAMES) }, { weight: 1, arbitrary: fc.string({ maxLength: 20 }).filter((s) => !/["\r\n\\]/.test(s)) });

fuzz(`POST /v1/files: JSON bodies from UploadFileJson and their mutations, multipart with odd parts and names (${runs.files} cases)`, async () => {
  await withWorld(async (w) => {
    const jsonBody = mutated(
      fc.oneof(
        fromSchema('service', component('service', 'UploadFileJson')),
        fc.record({ content: fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b).toString('base64')), filename: filenameArb }, { requiredKeys: ['content'] }),
      ),
    );
    const multipart = fc.record({
      fields: fc.array(
        fc.tuple(
          fc.oneof(fc.constantFrom('duration', 'width', 'height', '__proto__', 'constructor', 'file', 'filename', 'mime_type'), fc.string({ minLength: 1, maxLength: 8 }).filter((s) => !/["\r\n\\]/.test(s))),
          fc.oneof(fc.constantFrom('5', '-1', '0', '86400', '86401', '1e3', 'abc', '', '100000', '100001', '1.5', ' 7 ', 'NaN'), fc.string({ maxLength: 8 })),
        ),
        { maxLength: 4 },
      ),
      files: fc.array(
        fc.record({
          field: fc.oneof({ weight: 4, arbitrary: fc.constant('file') }, { weight: 1, arbitrary: fc.constantFrom('other', '__proto__', 'files') }),
          bytes: fc.uint8Array({ maxLength: 256 }).map((b) => Buffer.from(b)),
          filename: filenameArb.filter((s) => s.length > 0),
          contentType: fc.constantFrom('application/octet-stream', 'image/png', 'video/mp4', 'audio/mpeg', 'text/plain', 'image/../../x', 'x', 'application/json'),
        }),
        { maxLength: 2 },
      ),
    });
    const kind = fc.oneof(
      { weight: 3, arbitrary: jsonBody.map((value) => ({ kind: 'json' as const, value })) },
      { weight: 2, arbitrary: multipart.map((m) => ({ kind: 'multipart' as const, ...m })) },
    );
    await check(
      fc.asyncProperty(kind, async (k) => {
        const body: Body = k.kind === 'json' ? { kind: 'json', value: k.value } : { kind: 'multipart', fields: k.fields, files: k.files };
        await exchange(w, {
          method: 'POST',
          path: '/v1/files',
          headers: asA(w),
          body,
          // A stored file is served under a fresh random name, whatever the upload was called.
          expect: (res) =>
            res.status !== 200 || /^http:\/\/127\.0\.0\.1:4010\/files\/[A-Za-z0-9]{32}\.[a-z0-9]+$/.test(String((res.body as { url?: unknown }).url))
              ? []
              : [`the file is served at ${String((res.body as { url?: unknown }).url)}`],
        });
      }),
      params(runs.files),
    );
  });
});

// ---------------------------------------------------------------------------------------------------------------
// GET /v1/models, GET /v1/models/{id}, GET /v1/pricing

fuzz(`GET /v1/models, /v1/models/{id}, /v1/pricing: model ids real and nasty, stray queries (${runs.models} cases)`, async () => {
  await withWorld(async (w) => {
    const kind = fc.oneof(
      fc.record({ path: fc.constantFrom('/v1/models', '/v1/pricing'), query: fc.constantFrom('', '?x=1', '?__proto__[polluted]=1', '?%=%', '?limit=-1') }),
      fc.record({
        path: fc.oneof(fc.constantFrom(...TASK_MODELS, ...TEXT_MODELS), nastyId, fc.string({ minLength: 1, maxLength: 20 }).map(encodeURIComponent)).map((id) => `/v1/models/${id}`),
        query: fc.constantFrom('', '?x=1'),
      }),
    );
    await check(
      fc.asyncProperty(kind, async (k) => {
        const known = [...TASK_MODELS, ...TEXT_MODELS].some((m) => k.path === `/v1/models/${m}`);
        await exchange(w, {
          method: 'GET',
          path: `${k.path}${k.query}`,
          headers: asA(w),
          ...(k.path.startsWith('/v1/models/') ? { expect: known ? expectStatus(200) : expectStatus(404) } : { expect: expectStatus(200) }),
        });
      }),
      params(runs.models),
    );
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Operations without a body, sent one anyway

fuzz(`bodies sent to operations that take none (GETs, cancel, control steps): the answer stays documented (${runs.bodylessBodies} cases)`, async () => {
  await withWorld(async (w) => {
    const targets: [Verb, (w: World) => string][] = [
      ['GET', () => '/v1/tasks'],
      ['GET', (x) => `/v1/tasks/${x.ownTasks[0] ?? ''}`],
      ['POST', () => '/v1/tasks/T261123090000AAAAAA/cancel'],
      ['GET', () => '/v1/models'],
      ['GET', () => '/v1/models/svc-text-pro'],
      ['GET', () => '/v1/pricing'],
      ['GET', () => '/_emulator/health'],
      ['GET', () => '/_emulator/clock'],
      ['GET', () => '/_emulator/accounts'],
      ['GET', () => '/_emulator/tasks'],
      ['GET', () => '/_emulator/scenarios'],
      ['GET', () => '/_emulator/records'],
      ['POST', () => '/_emulator/tasks/T261123090000AAAAAA/advance'],
      ['POST', (x) => `/_emulator/accounts/${x.accountB}/webhook/test`],
    ];
    const kind = fc.record({
      target: fc.constantFrom(...targets),
      body: fc.oneof(
        fc.constantFrom(...MALFORMED, ...NON_OBJECTS).map((text) => ({ kind: 'raw' as const, contentType: 'application/json', bytes: text })),
        fc.jsonValue({ maxDepth: 2 }).map((value) => ({ kind: 'json' as const, value })),
        fc.constantFrom('text/plain', 'application/xml', 'application/json; charset=latin1').map((type) => ({ kind: 'raw' as const, contentType: type, bytes: 'hello' })),
      ),
    });
    await check(
      fc.asyncProperty(kind, async (k) => {
        const [method, pathOf] = k.target;
        const path = pathOf(w);
        await exchange(w, { method, path, headers: headersFor(w, path), body: k.body as Body });
      }),
      params(runs.bodylessBodies),
    );
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Paths: traversal, malformed percent-encodings, case variants, unknown paths, wrong methods

fuzz(`path parameters and paths: traversal, malformed percent-encodings, case variants, unknown paths, wrong methods (${runs.paths} cases)`, async () => {
  await withWorld(async (w) => {
    const templates: [Verb, (id: string) => string][] = [
      ['GET', (id) => `/v1/tasks/${id}`],
      ['POST', (id) => `/v1/tasks/${id}/cancel`],
      ['GET', (id) => `/v1/models/${id}`],
      ['GET', (id) => `/files/${id}`],
      ['GET', (id) => `/_emulator/accounts/${id}`],
      ['GET', (id) => `/_emulator/accounts/${id}/ledger`],
      ['GET', (id) => `/_emulator/keys/${id}`],
      ['GET', (id) => `/_emulator/records/${id}`],
      ['POST', (id) => `/_emulator/tasks/${id}/advance`],
      ['POST', (id) => `/_emulator/tasks/${id}/cancel`],
      ['POST', (id) => `/_emulator/webhooks/deliveries/${id}/resend`],
      ['POST', (id) => `/_emulator/accounts/${id}/webhook/rotate`],
    ];
    const fixed = [
      '/files/../../package.json', '/files/..%2F..%2Fpackage.json', '/files/%2e%2e%2f%2e%2e%2fpackage.json', '/files/....//....//package.json',
      '/v1/tasks/../../package.json', '/v1/../package.json', '/_emulator/../package.json', '/v1/tasks/..%2f..%2fpackage.json',
      '/v1//tasks', '/v1/tasks//', '/v1/nope', '/_emulator/nope', '/v1', '/_emulator', '/', '/v1/tasks/%2F',
      '/v1/chat/completions/extra', '/v1/messages/batches', '/v1/responses/resp_1', `/files/${w.ownFile.name}`, `/files/${w.foreignFile.name}`,
      `/files/${w.ownFile.name}/..`, `/files/${w.ownFile.name}%00.png`, '/files/', '/files',
    ];
    const casePath = fc
      .tuple(
        fc.constantFrom('/v1/tasks', '/v1/models', '/v1/pricing', '/v1/chat/completions', '/v1/responses', '/v1/messages', '/_emulator/clock', '/_emulator/accounts', '/v1/files'),
        fc.array(fc.boolean(), { minLength: 24, maxLength: 24 }),
      )
      .map(([p, mask]) => [...p].map((ch, i) => (mask[i] ? ch.toUpperCase() : ch)).join(''));
    const kind = fc.oneof(
      {
        weight: 4,
        arbitrary: fc.record({
          template: fc.constantFrom(...templates),
          id: fc.oneof(nastyId, fc.constantFrom(w.foreignTask, w.ownTasks[0] ?? '', w.accountA, 'acct_demo', w.keyA, DEMO_KEY, w.deliveryId, w.requestId, w.ownFile.name, w.foreignFile.name)),
        }).map(({ template, id }) => ({ method: template[0], path: template[1](id) })),
      },
      { weight: 2, arbitrary: fc.constantFrom(...fixed).map((path) => ({ method: 'GET' as Verb, path })) },
      { weight: 2, arbitrary: fc.tuple(casePath, fc.constantFrom<Verb>('GET', 'POST')).map(([path, method]) => ({ method, path, variant: true })) },
      { weight: 1, arbitrary: fc.tuple(fc.constantFrom('/v1/tasks', '/v1/models', '/v1/chat/completions', '/_emulator/clock', '/_emulator/accounts', '/v1/files'), fc.constantFrom<Verb>('PUT', 'DELETE', 'PATCH')).map(([path, method]) => ({ method, path })) },
    );
    await check(
      fc.asyncProperty(kind, async (k) => {
        const { method, path } = k;
        const lower = path.toLowerCase();
        // Paths are exact: a case variant of a real path is an unknown path.
        const variant = 'variant' in k && path !== lower && !lower.startsWith('/files/');
        const headers = lower.startsWith('/_emulator') ? ADMIN : lower.startsWith('/v1') ? asA(w) : {};
        const body: Body | undefined = method === 'GET' ? undefined : groupOf(path) === 'general' ? undefined : { kind: 'json', value: {} };
        await exchange(w, {
          method,
          path,
          headers,
          ...(body ? { body } : {}),
          expect: (res) => {
            const problems: string[] = [];
            // Nothing but the caller's own stored files is ever served from /files.
            if (isFilesPath(path) && res.status === 200 && path !== `/files/${w.ownFile.name}` && path !== `/files/${w.foreignFile.name}`) problems.push('a file was served for a path that names none');
            if (path.includes(w.foreignTask) && path.startsWith('/v1/') && res.status !== 404) problems.push(`another account's task answered ${res.status}`);
            if (variant && (res.status !== 404 || codeOf(res) !== 'not_found')) problems.push(`a case variant of a path answered ${res.status} ${String(codeOf(res) ?? '')}, not 404 not_found`);
            return problems;
          },
        });
      }),
      params(runs.paths),
    );
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Signing headers at their limits

fuzz(`X-Svc-Timestamp / X-Svc-Nonce / X-Svc-Signature at and past their limits: the refusal is predicted (${runs.signing} cases)`, async () => {
  const w = await world({ signing: true });
  try {
    const signing = w.signingKey;
    if (!signing) throw new Error('no signing key');
    /** Nonces whose signature checked out: spent, even when a later check refused the request. */
    const spent = new Set<string>();
    const targets: [Verb, string, string | undefined][] = [
      ['GET', '/v1/tasks?limit=5', undefined],
      ['GET', '/v1/models', undefined],
      ['POST', '/v1/tasks', JSON.stringify(socialNote())],
      ['POST', '/v1/chat/completions', JSON.stringify(CHAT_BODY)],
      ['POST', '/v1/messages', JSON.stringify(MESSAGES_BODY)],
    ];
    const kind = fc.record({
      target: fc.constantFrom(...targets),
      ts: fc.constantFrom('now', 'now', 'now-290', 'now+290', 'now-310', 'now+310', 'now.5', '0', '-1', '1e3', '1 23', 'abc', '9999999999999', '999999999999', ''),
      nonce: fc.oneof(
        { weight: 4, arbitrary: fc.integer({ min: 6, max: 66 }).chain((n) => fc.string({ unit: visible, minLength: n, maxLength: n })) },
        { weight: 1, arbitrary: fc.constantFrom('', 'with space ok', 'caf\u00e9-caf\u00e9-caf\u00e9', 'abc\tdefghi', 'reused-nonce-1') },
      ),
      signature: fc.constantFrom('correct', 'correct', 'other-body', 'random', 'uppercase', 'no-prefix', 'empty'),
      omit: fc.constantFrom('none', 'none', 'none', 'timestamp', 'nonce', 'signature'),
    });
    await check(
      fc.asyncProperty(kind, async (k) => {
        const [method, path, bodyText] = k.target;
        const now = Math.floor(Date.now() / 1000);
        const ts = k.ts === 'now.5' ? `${now}.5` : k.ts.startsWith('now') ? String(now + Number(k.ts.slice(3) || 0)) : k.ts;
        const sign = (body: string): string => documentedSignature(signing.secret, ts, k.nonce, method, path, body);
        const signature =
          k.signature === 'correct'
            ? sign(bodyText ?? '')
            : k.signature === 'other-body'
              ? sign(`${bodyText ?? ''} `)
              : k.signature === 'random'
                ? `v1=${'ab'.repeat(32)}`
                : k.signature === 'uppercase'
                  ? `v1=${sign(bodyText ?? '').slice(3).toUpperCase()}`
                  : k.signature === 'no-prefix'
                    ? sign(bodyText ?? '').slice(3)
                    : '';
        const headers: Record<string, string> = { Authorization: `Bearer ${signing.key}` };
        if (k.omit !== 'timestamp') headers['X-Svc-Timestamp'] = ts;
        if (k.omit !== 'nonce') headers['X-Svc-Nonce'] = k.nonce;
        if (k.omit !== 'signature') headers['X-Svc-Signature'] = signature;
        // The predicted refusal, in the documented order of the checks.
        const sentTs = headers['X-Svc-Timestamp'] ?? '';
        const sentNonce = headers['X-Svc-Nonce'] ?? '';
        const sentSignature = headers['X-Svc-Signature'] ?? '';
        let expected: string | null = null;
        if (!sentTs || !sentNonce || !sentSignature) expected = 'signature_required';
        else if (!/^\d{1,12}$/.test(sentTs)) expected = 'signature_invalid';
        else if (Math.abs(now - Number(sentTs)) > 300) expected = 'signature_expired';
        else if (!/^[\x21-\x7e]{8,64}$/.test(sentNonce)) expected = 'signature_invalid';
        else if (k.signature !== 'correct') expected = 'signature_invalid';
        else if (spent.has(sentNonce)) expected = 'nonce_reused';
        await exchange(w, {
          method,
          path,
          headers,
          ...(bodyText !== undefined ? { body: { kind: 'raw', contentType: 'application/json', bytes: bodyText } as Body } : {}),
          expect: expected === null ? expectNot(401) : expectError(401, expected),
        });
        if (expected === null) spent.add(sentNonce);
      }),
      params(runs.signing),
    );
  } finally {
    await closeWorld(w);
  }
});

/** The documented scheme, written out here rather than taken from the emulator: v1= hex HMAC-SHA256 of the canonical string. */
function documentedSignature(secret: string, timestamp: string, nonce: string, method: string, path: string, body: string): string {
  const digest = createHash('sha256').update(body).digest('hex');
  return `v1=${createHmac('sha256', secret).update(`${timestamp}\n${nonce}\n${method}\n${path}\n${digest}`).digest('hex')}`;
}

// ---------------------------------------------------------------------------------------------------------------
// Last: the count

count();
