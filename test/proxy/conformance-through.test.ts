import { runConformance } from 'svc-emulator/conformance';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createEmulator } from '../../src/index.ts';
import type { Emulator } from '../../src/index.ts';
import { createProxy } from '../../src/proxy/index.ts';
import type { Proxy } from '../../src/proxy/index.ts';

// The whole conformance suite, bad requests and all, through the proxy in front of the emulator: the suite passes
// as it does directly (the proxy changes nothing), and the proxy's checks find nothing in any of its exchanges.
// The control API goes to the emulator itself: the proxy forwards /v1 only.

let emulator: Emulator;
let proxy: Proxy;
let direct: string;
let url: string;

beforeAll(async () => {
  emulator = await createEmulator({ clock: 'manual', adminToken: 'adm', allowInsecureWebhooks: true, log: () => undefined });
  direct = await emulator.listen(0);
  proxy = createProxy({ upstream: direct, log: () => undefined });
  url = await proxy.listen(0);
});
afterAll(async () => {
  await proxy.close();
  await emulator.close();
});

it('passes every check through the proxy, and the proxy finds no deviation in any exchange', async () => {
  const report = await runConformance({ baseUrl: url, admin: { url: direct, token: 'adm' } });
  expect(report.results.filter((r) => r.status !== 'passed').map((r) => `${r.id}: ${r.failure?.message ?? r.reason ?? ''}`)).toEqual([]);
  await proxy.settled();
  expect(proxy.exchanges()).toBeGreaterThan(60);
  expect(proxy.deviations()).toEqual([]);
}, 60_000);
