import { createServer } from 'node:http';
import { Webhook } from 'standardwebhooks';
import { runConformance } from 'svc-emulator/conformance';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { UsageError } from '../../src/cli/args.ts';
import { PROXY_HELP } from '../../src/cli/help.ts';
import { parseProxyOptions } from '../../src/cli/proxy.ts';
import { createEmulator } from '../../src/index.ts';
import type { Emulator } from '../../src/index.ts';
import { spawnCommand } from '../support/command.ts';
import { closedAfterEach, listenLocal, startProxy } from '../support/proxy.ts';
import { ioUntil, startReceiver } from '../support/receiver.ts';
import { sendSucceeded, taskOf } from './task-bodies.ts';

// `proxy --admin-url --admin-token`: in front of an emulator whose clock is moved by hand, the proxy stamps what
// it sees with the emulator's clock, read through the control API, so the whole conformance suite (callbacks
// relayed too) passes through it without a finding; and without --webhook-secret it checks each relayed callback
// with the secrets of the account whose key submitted the task, read through the control API and never shown.

const ADMIN = 'control-admin';
const closing = closedAfterEach();

let manual: Emulator;
let manualUrl: string;

beforeAll(async () => {
  manual = await createEmulator({ clock: 'manual', adminToken: ADMIN, allowInsecureWebhooks: true, log: () => undefined });
  manualUrl = await manual.listen(0);
});
afterAll(() => manual.close());

async function control(base: string, method: string, path: string, body?: object): Promise<Record<string, unknown>> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { Authorization: `Bearer ${ADMIN}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  expect(res.ok, `${path} answered ${res.status}`).toBe(true);
  return (await res.json()) as Record<string, unknown>;
}

it('relaying callbacks in front of an emulator on a manual clock: the conformance suite passes and the proxy finds nothing', async () => {
  const { proxy, url, lines } = await startProxy(manualUrl, closing, [], { relay: {}, admin: { url: manualUrl, token: ADMIN } });
  // The suite moves the clock through the emulator's own control API: the proxy learns of it only by reading it.
  const report = await runConformance({ baseUrl: url, admin: { url: manualUrl, token: ADMIN } });
  expect(report.results.filter((r) => r.status !== 'passed').map((r) => `${r.id}: ${r.failure?.message ?? r.reason ?? ''}`)).toEqual([]);
  await proxy.settled();
  expect(proxy.exchanges()).toBeGreaterThan(60);
  expect(proxy.deviations()).toEqual([]);
  expect(lines).toEqual([]);
  // The suite's callbacks came through the proxy.
  const deliveries = (await control(manualUrl, 'GET', '/_emulator/webhooks/deliveries'))['data'] as { url: string }[];
  expect(deliveries.length).toBeGreaterThan(0);
  for (const delivery of deliveries) expect(delivery.url).toMatch(new RegExp(`^${url.replace(/[.]/g, '\\.')}/_proxy/callbacks/[\\w-]{20,}$`));
}, 90_000);

// A service of this file's own, which signs one callback with a secret that is not its account's. The accounts
// and the clock are an emulator's (on real time, as the service's own times are).


it('without --webhook-secret, a callback signed with a secret not its account’s is reported, one signed with a rotated-out secret is not, and no key or secret is shown', async () => {
  const accounts = await createEmulator({ adminToken: ADMIN, log: () => undefined });
  const accountsUrl = await accounts.listen(0);
  closing.push(accounts);
  const account = await control(accountsUrl, 'POST', '/_emulator/accounts', { points: '1000.000' });
  const old = String(account['webhook_secret']);
  const key = String((await control(accountsUrl, 'POST', `/_emulator/accounts/${String(account['id'])}/keys`, {}))['key']);
  // The old secret still signs for 24 clock hours after a rotation.
  const current = String((await control(accountsUrl, 'POST', `/_emulator/accounts/${String(account['id'])}/webhook/rotate`))['webhook_secret']);
  const other = `whsec_${Buffer.from('not-the-account-secret-at-all').toString('base64')}`;
  const signers: Record<string, string> = { current, old, badsig: other };

  const hook = await startReceiver();
  closing.push(hook);
  const t0 = Date.now();
  const callbacks: Promise<Response>[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const sent = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { webhook_url: string; metadata: { order: string } };
      const order = sent.metadata.order;
      const id = `T261126100000${order.toUpperCase().slice(0, 6).padEnd(6, 'X')}`;
      res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'X-Request-Id': `req_${order.padEnd(24, 'x')}` }).end(JSON.stringify(taskOf(id, 'queued', order, t0)));
      callbacks.push(sendSucceeded(sent.webhook_url, new Webhook(signers[order] ?? ''), id, order, t0));
    });
  });
  const upstream = await listenLocal(server, closing);
  const { proxy, url, lines } = await startProxy(upstream, closing, [], { relay: {}, admin: { url: accountsUrl, token: ADMIN } });

  for (const order of ['current', 'old', 'badsig']) {
    const res = await fetch(`${url}/v1/tasks`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ model: 'social-notes-data', input: { mode: 'note', note: `https://notes.example.com/n/${order}`, agree: true }, webhook_url: hook.url, metadata: { order } }),
    });
    expect(res.status).toBe(200);
  }
  expect(await ioUntil(() => hook.received.length === 3)).toBe(true);
  expect((await Promise.all(callbacks)).map((r) => r.status)).toEqual([200, 200, 200]);
  await proxy.settled();

  const found = proxy.deviations();
  expect(found.map((d) => `${d.check} ${d.message}`)).toEqual(['callbacks.signature.verifies callback msg_badsig1: no signature verifies with the account secret over the bytes received']);
  expect(lines).toHaveLength(1);
  for (const hidden of [key, old, current]) expect(JSON.stringify([found, lines])).not.toContain(hidden);
}, 30_000);

it('with a control API it cannot read (a wrong token), says so once and stamps with the machine’s clock', async () => {
  const { proxy, url, lines } = await startProxy(manualUrl, closing, [], { relay: {}, admin: { url: manualUrl, token: 'not-the-token' } });
  expect(lines).toEqual([`proxy: the control API at ${manualUrl} does not tell the deployment's time (GET /_emulator/clock answered 401): stamped with this machine's clock until it does`]);
  expect((await fetch(`${url}/v1/models`, { headers: { Authorization: 'Bearer sk-unknown-to-it' } })).status).toBe(401);
  await proxy.settled();
  expect(lines).toHaveLength(1);
});

it('parses --admin-url with --admin-token, and refuses either without the other', () => {
  const base = ['--upstream', 'http://127.0.0.1:4010'];
  expect(parseProxyOptions(base).admin).toBeNull();
  expect(parseProxyOptions([...base, '--admin-url', 'http://127.0.0.1:4010', '--admin-token', 'adm']).admin).toEqual({ url: 'http://127.0.0.1:4010', token: 'adm' });
  expect(() => parseProxyOptions([...base, '--admin-url', 'http://127.0.0.1:4010'])).toThrow('svc-emulator proxy: --admin-url needs --admin-token');
  expect(() => parseProxyOptions([...base, '--admin-token', 'adm'])).toThrow('svc-emulator proxy: --admin-token needs --admin-url');
  expect(() => parseProxyOptions([...base, '--admin-url', '127.0.0.1:4010', '--admin-token', 'adm'])).toThrow('--admin-url must start with http:// or https://');
  expect(PROXY_HELP).toMatch(/--admin-url URL\s+an emulator's control API/);
  expect(PROXY_HELP).toMatch(/--admin-token T\s+the emulator's control API token/);
});

it('svc-emulator proxy: --admin-token without --admin-url is a usage error (exit 2)', () => {
  // The parser's error, which src/cli/main.ts prints as one line, exit 2, as every usage error (through the process:
  // proxy.test.ts, 'svc-emulator proxy without --upstream').
  expect(() => parseProxyOptions(['--upstream', 'http://127.0.0.1:9', '--admin-token', 'adm'])).toThrow(UsageError);
  expect(() => parseProxyOptions(['--upstream', 'http://127.0.0.1:9', '--admin-token', 'adm'])).toThrow(
    /^svc-emulator proxy: --admin-token needs --admin-url \(the emulator's address, usually the same as --upstream\)$/,
  );
});

it('svc-emulator proxy --relay-callbacks --admin-url --admin-token says where its clock and secrets come from', async () => {
  const child = spawnCommand(['proxy', '--upstream', manualUrl, '--port', '0', '--relay-callbacks', '--admin-url', manualUrl, '--admin-token', ADMIN]);
  closing.push({ close: async () => void (child.exitCode === null && child.signalCode === null && child.kill('SIGKILL')) });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  expect(await ioUntil(() => output.includes('relaying task callbacks'), 25_000), output).toBe(true);
  expect(output).toContain(`stamping with the deployment's clock, read from ${manualUrl}/_emulator/clock`);
  expect(output).toContain("signatures checked with the secrets of each key's account, read from the control API");
  expect(output).not.toContain(ADMIN);
}, 30_000);
