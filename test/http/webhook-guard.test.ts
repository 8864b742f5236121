import { afterEach, beforeEach, expect, it } from 'vitest';
import { createSender } from '../../src/webhooks/index.ts';
import { newAccount, socialNote, startEmulator } from '../support/harness.ts';
import type { TestEmulator } from '../support/harness.ts';
import { resolveTestHost, TEST_HOSTS } from '../support/hosts.ts';
import { startReceiver } from '../support/receiver.ts';

// The internal-address guard on callback addresses: as written, as resolved at submission, and at connect time.

let t: TestEmulator;
beforeEach(async () => {
  t = await startEmulator({ resolveHost: resolveTestHost });
});
afterEach(() => t.close());

const refusal = async (webhook_url: string) => {
  const res = await t.api.post('/v1/tasks', { ...socialNote(), webhook_url });
  return res.status === 200 ? null : { status: res.status, details: res.body.error.details };
};

it.each([
  ['127.0.0.1', 'https://127.0.0.1/cb'],
  ['127.8.9.10', 'https://127.8.9.10/cb'],
  ['::1', 'https://[::1]/cb'],
  ['::ffff:127.0.0.1', 'https://[::ffff:127.0.0.1]/cb'],
  ['10/8', 'https://10.255.0.1/cb'],
  ['172.16/12', 'https://172.16.0.1/cb'],
  ['172.16/12 (top)', 'https://172.31.255.254/cb'],
  ['192.168/16', 'https://192.168.100.1/cb'],
  ['169.254/16', 'https://169.254.169.254/latest/meta-data'],
  ['fc00::/7', 'https://[fc00::1]/cb'],
  ['fc00::/7 (fd)', 'https://[fdff:ffff::1]/cb'],
  ['localhost', 'https://localhost/cb'],
  ['a localhost subdomain', 'https://api.localhost/cb'],
  ['IPv4-compatible ::127.0.0.1', 'https://[::127.0.0.1]/cb'],
  ['IPv4-translated ::ffff:0:7f00:1', 'https://[::ffff:0:7f00:1]/cb'],
  ['NAT64 64:ff9b::7f00:1', 'https://[64:ff9b::7f00:1]/cb'],
  ['6to4 2002:7f00:1::', 'https://[2002:7f00:1::]/cb'],
  ['Teredo to 127.0.0.1', 'https://[2001:0:5db8:d822::80ff:fffe]/cb'],
  ['site-local fec0::/10', 'https://[fec0::1]/cb'],
  ['NAT64 local-use 64:ff9b:1::/48', 'https://[64:ff9b:1::a00:1]/cb'],
])('refuses a literal %s callback address with 422 on webhook_url', async (_name, url) => {
  expect(await refusal(url)).toEqual({ status: 422, details: [{ field: 'webhook_url', message: 'must not be an internal-network address' }] });
});

it.each(Object.keys(TEST_HOSTS).filter((name) => name !== 'public.example.net'))(
  'refuses a name that resolves to an internal address: %s',
  async (host) => {
    const refused = await refusal(`https://${host}/cb`);
    expect(refused?.status).toBe(422);
    expect(refused?.details).toEqual([{ field: 'webhook_url', message: expect.stringContaining('must not resolve to an internal-network address') }]);
  },
);

it('accepts a name that resolves only to public addresses, and one that does not resolve yet', async () => {
  expect(await refusal('https://public.example.net/cb')).toBeNull();
  expect(await refusal('https://not-yet.example.org/cb')).toBeNull();
});

it.each([
  ['plain http', 'http://public.example.net/cb', ['must be an https address']],
  // All are true of it, and the document says each (WebhookUrl: format uri, https, a host).
  ['not a URL', 'hooks', ['must be an https address', 'must be an absolute URL with a host', 'must match format "uri"']],
])('refuses %s', async (_name, url, messages) => {
  expect((await refusal(url))?.details).toEqual(messages.map((message) => ({ field: 'webhook_url', message })));
});

it('guards the account default address set through the control API the same way', async () => {
  const account = await newAccount(t);
  const res = await t.admin.post(`/_emulator/accounts/${account.id}/webhook`, { url: 'https://ten.example.net/cb' });
  expect(res.status).toBe(422);
  expect(res.body.error.details[0].field).toBe('url');
  expect((await t.admin.post('/_emulator/accounts', { webhook_url: 'https://[::1]/cb' })).status).toBe(422);
});

it.each([
  ['127.0.0.1', (port: string) => `http://127.0.0.1:${port}/hook`],
  ['::ffff:127.0.0.1', (port: string) => `http://[::ffff:127.0.0.1]:${port}/hook`],
  ['::ffff:7f00:1 spelled as ::ffff:0:7f00:1', (port: string) => `https://[::ffff:0:7f00:1]:${port}/hook`],
  ['64:ff9b::7f00:1', (port: string) => `https://[64:ff9b::7f00:1]:${port}/hook`],
])('refuses at connect time a literal internal address (%s), which no name lookup sees', async (_name, url) => {
  const receiver = await startReceiver();
  try {
    const outgoing = { url: url(new URL(receiver.url).port), headers: {}, body: '{}', timeoutMs: 1000 };
    await expect(createSender(false)(outgoing)).rejects.toThrow('is an internal-network address');
    expect(receiver.received).toHaveLength(0);
  } finally {
    await receiver.close();
  }
});

it('refuses at connect time a name that resolves to loopback, and connects when insecure addresses are allowed', async () => {
  const receiver = await startReceiver();
  try {
    const port = new URL(receiver.url).port;
    const outgoing = { url: `http://localhost:${port}/hook`, headers: {}, body: '{}', timeoutMs: 1000 };
    await expect(createSender(false)(outgoing)).rejects.toThrow('localhost resolves to an internal-network address (127.0.0.1)');
    expect(receiver.received).toHaveLength(0);
    await expect(createSender(true)(outgoing)).resolves.toEqual({ status: 200, excerpt: 'ok' });
    expect(receiver.received).toHaveLength(1);
  } finally {
    await receiver.close();
  }
});
