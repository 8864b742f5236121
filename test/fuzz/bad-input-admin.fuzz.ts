import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import fc from 'fast-check';
import request from 'supertest';
import { afterAll } from 'vitest';
import { ADMIN_TOKEN, DEMO_KEY, socialNote, startEmulator } from '../support/harness.ts';
import { params } from './bad-input/budget.ts';
import { MALFORMED, nastyId, queryArb } from './bad-input/cases.ts';
import { ADMIN, PUBLIC_URL, V1, component, isObject } from './bad-input/documents.ts';
import { excerpt, exchange, expectError, expectStatus, servers } from './bad-input/exchange.ts';
import type { Body, Verb, World } from './bad-input/exchange.ts';
import { mutated } from './bad-input/mutations.ts';
import { fuzzPart } from './bad-input/part.ts';
import { MAX_BODY_DEPTH, containerDepth } from './bad-input/raw-json.ts';
import { fromSchema } from './bad-input/schema-arbitraries.ts';
import { call, closeWorld, withWorld } from './bad-input/world.ts';

/**
 * Bad input, fuzzed, this part: the control API (/_emulator): reads with ids real and nasty, writes
 * with bodies generated from the OpenAPI schemas and mutated, every route without its token; the clock speed on
 * a real clock; crash-class inputs against a child process with a small heap; and reset, last.
 *
 * One of the suite's parts (test/fuzz/bad-input-*.fuzz.ts), which vitest runs on different workers; the shared
 * machinery, the budget and how to replay a failure are in test/fuzz/bad-input/.
 */

const { runs, fuzz, check, once, count } = fuzzPart('admin');

// ---------------------------------------------------------------------------------------------------------------
// The control API

fuzz(`control API reads: every GET with ids real and nasty and fuzzed list queries (${runs.adminReads} cases)`, async () => {
  await withWorld(async (w) => {
    const ids = fc.oneof(nastyId, fc.constantFrom(w.accountA, w.accountB, 'acct_demo', w.keyA, DEMO_KEY, w.requestId, w.deliveryId, ...w.ownTasks));
    const kind = fc.oneof(
      fc.constantFrom('/_emulator/health', '/_emulator/clock', '/_emulator/accounts', '/_emulator/scenarios'),
      queryArb('admin', '/_emulator/tasks', 'get').map((q) => `/_emulator/tasks${q}`),
      queryArb('admin', '/_emulator/records', 'get').map((q) => `/_emulator/records${q}`),
      queryArb('admin', '/_emulator/webhooks/deliveries', 'get').map((q) => `/_emulator/webhooks/deliveries${q}`),
      ids.map((id) => `/_emulator/accounts/${id}`),
      ids.map((id) => `/_emulator/accounts/${id}/ledger`),
      ids.map((id) => `/_emulator/keys/${id}`),
      ids.map((id) => `/_emulator/records/${id}`),
    );
    await check(
      fc.asyncProperty(kind, async (path) => {
        await exchange(w, { method: 'GET', path, headers: ADMIN });
      }),
      params(runs.adminReads),
    );
  });
});

fuzz(`control API writes: schema-derived bodies and their mutations on every POST and PATCH (${runs.adminWrites} cases)`, async () => {
  await withWorld(async (w) => {
    const account = fc.oneof({ weight: 3, arbitrary: fc.constantFrom(w.accountA, w.accountB, 'acct_demo') }, { weight: 1, arbitrary: nastyId });
    const key = fc.oneof({ weight: 3, arbitrary: fc.constantFrom(w.keyA, w.keyB) }, { weight: 1, arbitrary: nastyId });
    // The latest tasks, read when a case is drawn: queued ones keep coming (below) as steps finish them.
    const task = fc.oneof(
      { weight: 4, arbitrary: fc.nat().map((i) => w.ownTasks[w.ownTasks.length - 1 - (i % Math.min(6, w.ownTasks.length))] ?? '') },
      { weight: 1, arbitrary: fc.constant(w.foreignTask) },
      { weight: 1, arbitrary: nastyId },
    );
    // Refills come from an account the cases never name, so no case can make them fail.
    const refill = (await call(w.t, 'POST', '/_emulator/accounts', ADMIN, { points: '999999999.000' })).body as { id: string };
    const refillKey = ((await call(w.t, 'POST', `/_emulator/accounts/${refill.id}/keys`, ADMIN, {})).body as { key: string }).key;
    const delivery = fc.oneof({ weight: 3, arbitrary: fc.constant(w.deliveryId) }, { weight: 1, arbitrary: nastyId });
    const body = (name: string): fc.Arbitrary<unknown> => mutated(fromSchema('admin', component('admin', name)));
    const kind = fc.oneof(
      fc.record({ method: fc.constant<Verb>('POST'), path: fc.constant('/_emulator/clock/advance'), body: mutated(fc.record({ seconds: fc.oneof(fc.integer({ min: 0, max: 600 }), fc.constantFrom(0, -1, 31536000, 31536001, 0.5)) })) }),
      fc.record({ method: fc.constant<Verb>('POST'), path: fc.constant('/_emulator/clock/speed'), body: body('ClockSpeedRequest') }),
      fc.record({ method: fc.constant<Verb>('POST'), path: fc.constant('/_emulator/accounts'), body: body('CreateAccountRequest') }),
      fc.record({ method: fc.constant<Verb>('PATCH'), path: account.map((id) => `/_emulator/accounts/${id}`), body: body('AccountSettings') }),
      fc.record({ method: fc.constant<Verb>('POST'), path: account.map((id) => `/_emulator/accounts/${id}/keys`), body: body('KeySettings') }),
      fc.record({ method: fc.constant<Verb>('PATCH'), path: key.map((id) => `/_emulator/keys/${id}`), body: body('KeySettings') }),
      fc.record({ method: fc.constant<Verb>('POST'), path: account.map((id) => `/_emulator/accounts/${id}/webhook`), body: body('SetWebhookRequest') }),
      fc.record({ method: fc.constant<Verb>('POST'), path: task.map((id) => `/_emulator/tasks/${id}/complete`), body: body('CompleteTaskRequest') }),
      fc.record({ method: fc.constant<Verb>('POST'), path: task.map((id) => `/_emulator/tasks/${id}/fail`), body: body('FailTaskRequest') }),
      fc.record({ method: fc.constant<Verb>('POST'), path: fc.constant('/_emulator/scenarios'), body: body('ScenarioFile') }),
      fc.record({ method: fc.constant<Verb>('POST'), path: task.map((id) => `/_emulator/tasks/${id}/advance`), body: fc.constant(undefined) }),
      fc.record({ method: fc.constant<Verb>('POST'), path: task.map((id) => `/_emulator/tasks/${id}/cancel`), body: fc.constant(undefined) }),
      fc.record({ method: fc.constant<Verb>('POST'), path: account.map((id) => `/_emulator/accounts/${id}/webhook/test`), body: fc.constant(undefined) }),
      fc.record({ method: fc.constant<Verb>('POST'), path: account.map((id) => `/_emulator/accounts/${id}/webhook/rotate`), body: fc.constant(undefined) }),
      fc.record({ method: fc.constant<Verb>('POST'), path: delivery.map((id) => `/_emulator/webhooks/deliveries/${id}/resend`), body: fc.constant(undefined) }),
    );
    // Tasks get used up (finished); keep some queued ones coming so the steps have something to act on.
    let submitted = 0;
    await check(
      fc.asyncProperty(kind, async (k) => {
        if (submitted++ % 20 === 0) {
          const res = await request(w.t.emulator.app).post('/v1/tasks').set({ Authorization: `Bearer ${refillKey}` }).send(socialNote());
          if (res.status === 200) w.ownTasks.push((res.body as { id: string }).id);
        }
        await exchange(w, { method: k.method, path: k.path, headers: ADMIN, ...(k.body !== undefined ? { body: { kind: 'json', value: k.body } as Body } : {}) });
      }),
      params(runs.adminWrites),
    );
  });
});

fuzz(`control API without its token: 401 unauthorized whatever the body; health needs none (${runs.adminAuth} cases)`, async () => {
  await withWorld(async (w) => {
    const routes: [Verb, string][] = [
      ['GET', '/_emulator/clock'], ['POST', '/_emulator/clock/advance'], ['POST', '/_emulator/clock/speed'], ['POST', '/_emulator/accounts'], ['GET', '/_emulator/accounts'],
      ['GET', `/_emulator/accounts/${w.accountA}`], ['PATCH', `/_emulator/accounts/${w.accountA}`], ['GET', '/_emulator/tasks'],
      ['POST', `/_emulator/tasks/${w.ownTasks[0] ?? ''}/complete`], ['POST', '/_emulator/scenarios'], ['PATCH', `/_emulator/keys/${w.keyA}`],
      ['GET', '/_emulator/records'], ['GET', '/_emulator/webhooks/deliveries'], ['POST', '/_emulator/reset'], ['GET', '/_emulator/nope'],
    ];
    const kind = fc.record({
      route: fc.constantFrom(...routes),
      auth: fc.constantFrom<Record<string, string>>({}, { Authorization: 'Bearer wrong' }, { Authorization: `Bearer ${ADMIN_TOKEN}x` }, { Authorization: ADMIN_TOKEN }, { Authorization: `Basic ${ADMIN_TOKEN}` }, { Authorization: `Bearer ${DEMO_KEY}` }, { Authorization: 'Bearer __proto__' }, { 'x-api-key': ADMIN_TOKEN }),
      body: fc.oneof(
        fc.constant(undefined),
        fc.jsonValue({ maxDepth: 2 }).map((value): Body => ({ kind: 'json', value })),
        fc.constantFrom(...MALFORMED).map((text): Body => ({ kind: 'raw', contentType: 'application/json', bytes: text })),
        fc.constantFrom('text/plain', 'application/xml', 'application/json; charset=latin1').map((type): Body => ({ kind: 'raw', contentType: type, bytes: '{}' })),
      ),
    });
    await check(
      fc.asyncProperty(kind, async (k) => {
        const [method, path] = k.route;
        await exchange(w, { method, path, headers: k.auth, ...(k.body ? { body: k.body } : {}), expect: expectError(401, 'unauthorized') });
      }),
      params(runs.adminAuth),
    );
    await once(w, { method: 'GET', path: '/_emulator/health', headers: {}, expect: expectStatus(200) });
  });
});

fuzz(`POST /_emulator/clock/speed on a real clock: speeds in and out of range, junk bodies; the clock reads back as set (${runs.clockSpeed} cases)`, async () => {
  // A bare emulator on the real clock, with nothing scheduled that a faster clock could change under a case.
  const logs: string[] = [];
  const t = await startEmulator({ clock: 'real', publicUrl: PUBLIC_URL, log: (message) => void logs.push(message), resolveHost: () => Promise.resolve([]), send: () => Promise.resolve({ status: 200, excerpt: 'ok' }) });
  await t.emulator.listen(0);
  if (t.emulator.server) servers.set(t.emulator.app, t.emulator.server);
  const w = { t, logs } as unknown as World;
  try {
    const speed = fc.oneof(
      { weight: 3, arbitrary: fromSchema('admin', component('admin', 'ClockSpeedRequest')) },
      { weight: 2, arbitrary: fc.constantFrom(0, -1, -0, 5e-324, 1e-9, 0.5, 1, 1_000_000, 1_000_000.5, 1e308, '2', null, true, [], {}).map((v) => ({ speed: v })) },
      { weight: 1, arbitrary: mutated(fc.constant({ speed: 2 })) },
    );
    await check(
      fc.asyncProperty(speed, async (body) => {
        const res = await exchange(w, { method: 'POST', path: '/_emulator/clock/speed', headers: ADMIN, body: { kind: 'json', value: body } });
        const asked = isObject(body) ? body['speed'] : undefined;
        // A speed in range is taken, unless the body around it nests past the limit every body has (400).
        const valid = typeof asked === 'number' && asked > 0 && asked <= 1_000_000 && containerDepth(body) <= MAX_BODY_DEPTH;
        await exchange(w, {
          method: 'GET',
          path: '/_emulator/clock',
          headers: ADMIN,
          expect: (clock) => {
            const now = (clock.body as { speed?: unknown }).speed;
            if (valid && res.status !== 200) return [`speed ${String(asked)} was refused with ${res.status}`];
            if (!valid && res.status === 200) return [`speed ${excerpt(asked)} was accepted`];
            return res.status === 200 && now !== asked ? [`the clock reads speed ${String(now)} after ${String(asked)} was set`] : [];
          },
        });
      }),
      params(runs.clockSpeed),
    );
  } finally {
    await closeWorld(w);
  }
});

// ---------------------------------------------------------------------------------------------------------------
// Inputs that can take a whole process down: against a child process with a small heap

const BIN = new URL('../../bin/svc-emulator.js', import.meta.url).pathname;
const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
});

interface Child {
  base: string;
  exit: () => string | null;
  stderr: () => string;
}

async function startChild(): Promise<Child> {
  const child = spawn(
    process.execPath,
    ['--max-old-space-size=192', BIN, 'start', '--port', '0', '--memory', '--clock', 'manual', '--admin-token', ADMIN_TOKEN, '--log-level', 'error'],
    { stdio: 'pipe' },
  );
  children.push(child);
  let out = '';
  let err = '';
  let exited: string | null = null;
  child.stderr?.on('data', (chunk: Buffer) => (err = (err + chunk.toString()).slice(-4000)));
  child.on('exit', (code, signal) => (exited = `exited with ${code ?? signal}`));
  const base = await new Promise<string>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const found = /listening on (http:\/\/[^\s]+)/.exec(out)?.[1];
      if (found) resolve(found);
    });
    child.on('exit', () => reject(new Error(`the emulator did not start: ${out}${err}`)));
  });
  return { base, exit: () => exited, stderr: () => err };
}

function multipartBytes(boundary: string, filename: string, type: string, content: Buffer, fields: [string, string][]): Buffer {
  const parts = fields.map(([n, v]) => `--${boundary}\r\nContent-Disposition: form-data; name="${n}"\r\n\r\n${v}\r\n`).join('');
  return Buffer.concat([
    Buffer.from(`${parts}--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: ${type}\r\n\r\n`),
    content,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
}

fuzz(`crash-class inputs against a separate process (192 MB heap): truncated and mangled multipart, schema bombs in text bodies; the process answers and stays up (${runs.crashes} cases)`, async () => {
  let child = await startChild();
  const bomb = fc.letrec((tie) => ({
    node: fc.oneof(
      { maxDepth: 3, depthSize: 'small' },
      fc.constant<unknown>({ type: 'string' }),
      fc.record({ type: fc.constant('array'), minItems: fc.oneof(fc.integer({ min: 0, max: 50 }), fc.constantFrom(1e5, 1e6, 1e7, 1e8, 2 ** 31 - 1, 2 ** 32 - 1, 2 ** 32)), items: tie('node') }),
      fc.record({ type: fc.constant('object'), properties: fc.dictionary(fc.constantFrom('a', 'b', 'c'), tie('node'), { maxKeys: 3 }) }),
    ),
  })).node;
  const kind = fc.oneof(
    {
      weight: 3,
      arbitrary: fc.record({
        kind: fc.constant('multipart' as const),
        content: fc.uint8Array({ maxLength: 512 }).map((b) => Buffer.from(b)),
        fields: fc.array(fc.tuple(fc.constantFrom('duration', 'width', 'x'), fc.constantFrom('5', 'abc', '')), { maxLength: 2 }),
        mangle: fc.constantFrom('truncate', 'truncate', 'drop-close', 'junk-header', 'wrong-boundary', 'none'),
        at: fc.nat(),
        junk: fc.uint8Array({ minLength: 1, maxLength: 16 }).map((b) => Buffer.from(b)),
      }),
    },
    { weight: 2, arbitrary: fc.record({ kind: fc.constantFrom('json-schema' as const, 'tool' as const), schema: bomb }) },
  );
  try {
    await check(
      fc.asyncProperty(kind, async (k) => {
        if (child.exit() !== null) child = await startChild();
        let path: string;
        let type: string;
        let payload: Buffer;
        if (k.kind === 'multipart') {
          const boundary = 'fuzzboundary';
          const full = multipartBytes(boundary, 'a.mp4', 'video/mp4', k.content, k.fields);
          payload =
            k.mangle === 'truncate'
              ? full.subarray(0, k.at % full.length)
              : k.mangle === 'drop-close'
                ? full.subarray(0, full.length - `--${boundary}--\r\n`.length)
                : k.mangle === 'junk-header'
                  ? Buffer.concat([full.subarray(0, 20), k.junk, full.subarray(20)])
                  : full;
          path = '/v1/files';
          type = `multipart/form-data; boundary=${k.mangle === 'wrong-boundary' ? 'other' : boundary}`;
        } else {
          path = '/v1/chat/completions';
          type = 'application/json';
          const base = { model: 'svc-text-lite', messages: [{ role: 'user', content: 'x' }] };
          payload = Buffer.from(
            JSON.stringify(
              k.kind === 'json-schema'
                ? { ...base, response_format: { type: 'json_schema', json_schema: { name: 'x', schema: k.schema } } }
                : { ...base, tools: [{ type: 'function', function: { name: 'f', parameters: k.schema } }], tool_choice: 'required' },
            ),
          );
        }
        const summary = `POST ${path} ${type} ${excerpt(payload.toString('latin1'), 300)}`;
        let status: number | string;
        try {
          const res = await fetch(`${child.base}${path}`, { method: 'POST', headers: { ...V1, 'Content-Type': type }, body: payload, signal: AbortSignal.timeout(15_000) });
          status = res.status;
          await res.arrayBuffer();
        } catch (err) {
          status = `no answer (${String((err as Error).cause ?? err)})`;
        }
        let alive = false;
        try {
          alive = (await fetch(`${child.base}/_emulator/health`, { signal: AbortSignal.timeout(5_000) })).status === 200;
        } catch {
          alive = false;
        }
        if (typeof status !== 'number' || status >= 500 || !alive) {
          await new Promise((resolve) => setTimeout(resolve, 200));
          throw new Error(`${summary}\n→ ${status}; the process ${alive ? 'is up' : `is down (${child.exit() ?? 'not answering'})`}\n  stderr: ${child.stderr().slice(-600)}`);
        }
      }),
      // A dead process cannot shrink: report the first failure as found.
      params(runs.crashes, { endOnFailure: true }),
    );
  } finally {
    for (const c of children.splice(0)) c.kill('SIGKILL');
  }
});

// ---------------------------------------------------------------------------------------------------------------
// Last: reset

fuzz(`POST /_emulator/reset, last: with and without its token, with junk bodies (${runs.reset} cases)`, async () => {
  await withWorld(async (w) => {
    await check(
      fc.asyncProperty(fc.boolean(), fc.option(fc.jsonValue({ maxDepth: 2 }), { nil: undefined }), async (authorized, value) => {
        await exchange(w, {
          method: 'POST',
          path: '/_emulator/reset',
          headers: authorized ? ADMIN : {},
          ...(value !== undefined ? { body: { kind: 'json', value } as Body } : {}),
          expect: authorized ? () => [] : expectError(401, 'unauthorized'),
        });
      }),
      params(runs.reset),
    );
    // After a reset the demo key works again.
    await once(w, { method: 'GET', path: '/v1/tasks', headers: V1, expect: expectStatus(200) });
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Last: the count

count();
