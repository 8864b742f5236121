import { createServer } from 'node:http';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parseProxyOptions } from '../../src/cli/proxy.ts';
import { createEmulator } from '../../src/index.ts';
import type { Emulator } from '../../src/index.ts';
import type { EndedExchange } from '../../src/proxy/index.ts';
import { closedAfterEach, listenLocal, startProxy } from '../support/proxy.ts';
import { ioUntil, startReceiver } from '../support/receiver.ts';
import type { Receiver } from '../support/receiver.ts';
import { sendSucceeded, taskOf } from './task-bodies.ts';

// `proxy --relay-callbacks`: task callbacks come through the proxy, which checks them with the shared checker and
// passes them on unchanged. In front of the emulator nothing deviates and the receiver gets the service's exact,
// verifiable bytes; in front of a service of this file's own, a badly signed callback and one that comes while the
// task still reads as unfinished are each reported under their check id.

const ADMIN = 'relay-admin';
const REQUEST_ID = 'req_dddddddddddddddddddddddd';

let emulator: Emulator;
let direct: string;
let key: string;
let secret: string;
const closing = closedAfterEach();

async function control(method: string, path: string, body?: object): Promise<Record<string, unknown>> {
  const res = await fetch(`${direct}${path}`, {
    method,
    headers: { Authorization: `Bearer ${ADMIN}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  expect(res.ok, `${path} answered ${res.status}`).toBe(true);
  return (await res.json()) as Record<string, unknown>;
}

async function receiver(): Promise<Receiver> {
  const r = await startReceiver();
  closing.push(r);
  return r;
}

/** A submission as a client writes it, spacing and all: only the address may change on its way. */
const submission = (hook: string, order: string): string =>
  `{ "model": "social-notes-data",\n  "input": { "mode": "note", "note": "https://notes.example.com/n/${order}", "agree": true },\n  "webhook_url": ${JSON.stringify(hook)},\n  "metadata": { "order": "${order}" } }`;

function post(base: string, path: string, body: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${base}${path}`, { method: 'POST', headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', ...headers }, body });
}

beforeAll(async () => {
  emulator = await createEmulator({ clock: 'manual', adminToken: ADMIN, allowInsecureWebhooks: true, log: () => undefined });
  direct = await emulator.listen(0);
  const account = await control('POST', '/_emulator/accounts', { points: '10000.000' });
  secret = String(account['webhook_secret']);
  key = String((await control('POST', `/_emulator/accounts/${String(account['id'])}/keys`, {}))['key']);
});
afterAll(() => emulator.close());

it('in front of the emulator: three tasks called back through the proxy reach the receiver as sent, verifiable, and nothing deviates', async () => {
  const hook = await receiver();
  const ended: EndedExchange[] = [];
  const { proxy, url, lines } = await startProxy(direct, closing, [], { relay: { webhookSecret: secret }, onExchange: (e) => ended.push(e) });

  const ids: string[] = [];
  const sent: string[] = [];
  for (const [order, scenario] of [['1', 'default'], ['2', 'generation_failed'], ['3', 'cancelable']] as const) {
    sent.push(submission(hook.url, order));
    const res = await post(url, '/v1/tasks', sent.at(-1) ?? '', { 'X-Emulator-Scenario': scenario });
    expect(res.status).toBe(200);
    const text = await res.text();
    // The client's view is its own: a task does not show its callback address, the proxy's least of all.
    expect(text).not.toContain('_proxy');
    expect(Object.keys(JSON.parse(text) as object)).not.toContain('webhook_url');
    ids.push((JSON.parse(text) as { id: string }).id);
  }
  // The service was given the proxy's address for each, a different one per submission.
  const given = await Promise.all(ids.map(async (id) => String((await control('GET', `/_emulator/tasks/${id}`))['webhook_url'])));
  for (const address of given) expect(address).toMatch(new RegExp(`^${url.replace(/[.]/g, '\\.')}/_proxy/callbacks/[\\w-]{20,}$`));
  expect(new Set(given).size).toBe(3);

  expect((await post(url, `/v1/tasks/${ids[2] ?? ''}/cancel`, '')).status).toBe(200);
  await control('POST', '/_emulator/clock/advance', { seconds: 60 });
  expect(await ioUntil(() => hook.received.length === 3)).toBe(true);
  const statuses: string[] = [];
  for (const id of ids) statuses.push(((await (await fetch(`${url}/v1/tasks/${id}`, { headers: { Authorization: `Bearer ${key}` } })).json()) as { status: string }).status);
  expect(statuses).toEqual(['succeeded', 'failed', 'canceled']);

  const webhook = new Webhook(secret);
  for (const got of hook.received) {
    expect(got.path).toBe('/hook');
    expect(got.headers['user-agent']).toBe('Svc-Webhook/1.0');
    // The signature holds over the bytes the receiver got: nothing was re-serialized on the way.
    const verified = webhook.verify(got.raw.toString('utf8'), got.headers as Record<string, string>) as { data: { id: string } };
    const id = verified.data.id;
    const deliveries = (await control('GET', `/_emulator/webhooks/deliveries?task_id=${id}`))['data'] as { body: string; url: string; attempts: { status_code: number }[] }[];
    expect(deliveries).toHaveLength(1);
    expect(got.raw.equals(Buffer.from(deliveries[0]?.body ?? '', 'utf8'))).toBe(true);
    expect(deliveries[0]?.url).toBe(given[ids.indexOf(id)]);
    // The receiver's answer went back to the service.
    expect(deliveries[0]?.attempts.map((a) => a.status_code)).toEqual([200]);
  }

  await proxy.settled();
  expect(proxy.deviations()).toEqual([]);
  expect(lines).toEqual([]);
  // What the client sent is what the checks and the recorder saw, byte for byte.
  const submits = ended.filter((e) => e.exchange.method === 'POST' && e.exchange.path === '/v1/tasks');
  expect(submits.map((e) => e.request.body?.toString('utf8'))).toEqual(sent);
  expect(submits.map((e) => e.exchange.requestBody)).toEqual(sent);
}, 30_000);

it('without --relay-callbacks the submission goes on unchanged, and a callback address of the proxy is 404; with it, an unknown one is', async () => {
  const hook = await receiver();
  const plain = await startProxy(direct, closing);
  const res = await post(plain.url, '/v1/tasks', submission(hook.url, '4'));
  const id = ((await res.json()) as { id: string }).id;
  expect((await control('GET', `/_emulator/tasks/${id}`))['webhook_url']).toBe(hook.url);
  expect((await fetch(`${plain.url}/_proxy/callbacks/anything`, { method: 'POST', body: '{}' })).status).toBe(404);

  const relaying = await startProxy(direct, closing, [], { relay: {} });
  const unknown = await fetch(`${relaying.url}/_proxy/callbacks/no-such-token`, { method: 'POST', body: '{}' });
  expect(unknown.status).toBe(404);
  expect(((await unknown.json()) as { error: { code: string } }).error.code).toBe('not_found');
  expect(hook.received).toEqual([]);
});

it('uses --public-url for the address it gives the service, and leaves alone an address an https relay would launder', async () => {
  const { url } = await startProxy(direct, closing, [], { relay: { publicUrl: 'https://relay.example.com/base/' } });
  // The emulator would call the public address back; here only the address it was given matters.
  const res = await post(url, '/v1/tasks', submission('https://hooks.example.com/in', '5'));
  const id = ((await res.json()) as { id: string }).id;
  expect(String((await control('GET', `/_emulator/tasks/${id}`))['webhook_url'])).toMatch(/^https:\/\/relay\.example\.com\/base\/_proxy\/callbacks\/[\w-]+$/);
  // A local plain-http address: a service that refuses it would have accepted the proxy's https one instead.
  const local = await post(url, '/v1/tasks', submission('http://127.0.0.1:9/hook', '6'));
  const localId = ((await local.json()) as { id: string }).id;
  expect((await control('GET', `/_emulator/tasks/${localId}`))['webhook_url']).toBe('http://127.0.0.1:9/hook');
});

it('parses --relay-callbacks with --public-url and --webhook-secret, and refuses them without it', () => {
  const base = ['--upstream', 'http://127.0.0.1:4010'];
  expect(parseProxyOptions(base).relay).toBeNull();
  expect(parseProxyOptions([...base, '--relay-callbacks']).relay).toEqual({ publicUrl: null, webhookSecret: null, callbackDeadlineMs: 60_000 });
  expect(parseProxyOptions([...base, '--relay-callbacks', '--public-url', 'https://p.example.com', '--webhook-secret', 'whsec_c2VjcmV0']).relay).toEqual({
    publicUrl: 'https://p.example.com',
    webhookSecret: 'whsec_c2VjcmV0',
    callbackDeadlineMs: 60_000,
  });
  expect(() => parseProxyOptions([...base, '--public-url', 'https://p.example.com'])).toThrow('--public-url goes with --relay-callbacks');
  expect(() => parseProxyOptions([...base, '--relay-callbacks', '--webhook-secret', 'nope'])).toThrow('must be a whsec_ secret');
  expect(() => parseProxyOptions([...base, '--relay-callbacks', '--public-url', 'ftp://x'])).toThrow('not an address');
});

// A service of this file's own, which calls back through the proxy's address in ways the reference rules out.


it('in front of a service that calls back wrongly: a bad signature and a callback before GET shows the task finished are reported', async () => {
  const hook = await receiver();
  // Created now, started a second later: the submission answer reads queued in time.
  const t0 = Date.now();
  const ids: Record<string, string> = { early: 'T261126100000EARLY1', badsig: 'T261126100000BADSG1' };
  const other = new Webhook(`whsec_${Buffer.from('not-the-account-secret-at-all').toString('base64')}`);
  const callbacks: Promise<Response>[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const json = (body: unknown): void => void res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'X-Request-Id': REQUEST_ID }).end(JSON.stringify(body));
      if (req.method === 'POST' && req.url === '/v1/tasks') {
        const sent = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { webhook_url: string; metadata: { order: string } };
        const order = sent.metadata.order;
        const id = ids[order] ?? 'T261126100000OTHER1';
        json(taskOf(id, 'queued', order, t0));
        // Called back at once, finished, while the task is still processing.
        callbacks.push(sendSucceeded(sent.webhook_url, order === 'badsig' ? other : new Webhook(secret), id, order, t0));
        return;
      }
      const id = /^\/v1\/tasks\/(\w+)$/.exec(req.url ?? '')?.[1] ?? '';
      json(taskOf(id, 'processing', Object.keys(ids).find((k) => ids[k] === id) ?? '', t0));
    });
  });
  const upstream = await listenLocal(server, closing);
  const { proxy, url } = await startProxy(upstream, closing, [], { relay: { webhookSecret: secret } });

  for (const order of ['early', 'badsig']) expect((await post(url, '/v1/tasks', submission(hook.url, order))).status).toBe(200);
  expect(await ioUntil(() => hook.received.length === 2)).toBe(true);
  expect((await Promise.all(callbacks)).map((r) => r.status)).toEqual([200, 200]);
  // Read once the callback has arrived: still processing.
  const read = await fetch(`${url}/v1/tasks/${ids['early'] ?? ''}`, { headers: { Authorization: `Bearer ${key}` } });
  expect(((await read.json()) as { status: string }).status).toBe('processing');
  await proxy.settled();

  // Passed on unchanged all the same, wrong signature included.
  const bad = hook.received.find((r) => r.headers['webhook-id'] === 'msg_badsig1');
  expect(() => new Webhook(secret).verify(bad?.raw.toString('utf8') ?? '', bad?.headers as Record<string, string>)).toThrow();
  const found = proxy.deviations();
  expect(found.map((d) => `${d.check} ${d.method} ${d.path}`).sort()).toEqual([
    `callbacks.get.terminal-on-arrival GET /v1/tasks/${ids['early'] ?? ''}`,
    `callbacks.signature.verifies POST ${hook.url}`,
  ]);
  const signature = found.find((d) => d.check === 'callbacks.signature.verifies');
  expect(signature).toMatchObject({ status: 200, request_id: null, message: 'callback msg_badsig1: no signature verifies with the account secret over the bytes received' });
  // A curl line that sends the callback to the receiver again, its webhook headers hidden as a recording hides them.
  expect(signature?.curl).toMatch(new RegExp(`^curl -sS -X POST '${hook.url}' -H 'content-type: application/json' -H 'webhook-id: \\[redacted\\]' .* --data-raw '\\{"type":"task.succeeded"`));
  expect(found.find((d) => d.check === 'callbacks.get.terminal-on-arrival')?.request_ids).toEqual([REQUEST_ID]);
}, 30_000);
