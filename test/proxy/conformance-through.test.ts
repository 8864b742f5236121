import { runConformance } from 'svc-emulator/conformance';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createEmulator } from '../../src/index.ts';
import type { Emulator } from '../../src/index.ts';
import { createProxy } from '../../src/proxy/index.ts';
import type { Proxy } from '../../src/proxy/index.ts';

// The whole conformance suite, bad requests and all, through the proxy in front of the emulator: the suite passes
// as it does directly (the proxy changes nothing), and the proxy's checks, the shared rules of behaviour over
// each account's exchanges included, find nothing in any of its exchanges.
// The control API goes to the emulator itself: the proxy forwards /v1 only.

let emulator: Emulator;
let proxy: Proxy;
let direct: string;
let url: string;

beforeAll(async () => {
  emulator = await createEmulator({ clock: 'manual', adminToken: 'adm', allowInsecureWebhooks: true, log: () => undefined });
  direct = await emulator.listen(0);
  // The suite moves the emulator's clock by hand: the rules that compare a read's time with the times the service
  // wrote read the emulator's clock, and a thousandth of the wall time gone by, so that what came later is never
  // stamped the same (the suite stamps its own history so).
  const wallStart = performance.now();
  proxy = createProxy({ upstream: direct, log: () => undefined, deploymentNow: () => emulator.clock.now() + (performance.now() - wallStart) / 1000 });
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
