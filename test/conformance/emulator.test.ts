import { afterAll, beforeAll, expect, it } from 'vitest';
import { junitXml, runConformance } from '../../src/conformance/index.ts';
import type { SuiteReport } from '../../src/conformance/index.ts';
import { createEmulator } from '../../src/index.ts';
import type { Emulator } from '../../src/index.ts';

// The whole suite against a freshly started emulator, as CI and users run it: it must pass, checks skip only
// for what the options do not provide, and the reports carry the same facts.

let emulator: Emulator;
let base: string;
beforeAll(async () => {
  emulator = await createEmulator({ clock: 'manual', adminToken: 'conformance-admin', allowInsecureWebhooks: true, log: () => undefined });
  base = await emulator.listen(0);
});
afterAll(() => emulator.close());

it('passes every check against the emulator, with the control API, a second account and a callback receiver', async () => {
  const report: SuiteReport = await runConformance({
    baseUrl: base,
    apiKey: 'sk-emulator-demo',
    admin: { url: base, token: 'conformance-admin' },
    budget: 100_000,
  });
  expect(report.results.filter((r) => r.status !== 'passed').map((r) => [r.id, r.failure?.message ?? r.reason])).toEqual([]);
  expect(report.passed).toBeGreaterThan(40);
  const groups = new Set(report.results.map((r) => r.group));
  expect([...groups].sort()).toEqual(['billing', 'callbacks', 'files', 'lifecycle', 'limits', 'tasks', 'text', 'validation', 'wire']);
  const xml = junitXml(report);
  expect(xml.match(/<testcase /g)).toHaveLength(report.results.length);
});

it('skips, with the reason, what needs a second key, a receiver or more budget', async () => {
  const report = await runConformance({ baseUrl: base, apiKey: 'sk-emulator-demo', budget: 100 });
  const skipped = Object.fromEntries(report.results.filter((r) => r.status === 'skipped').map((r) => [r.id, r.reason]));
  expect(skipped['tasks.isolation.other-account']).toContain('second key');
  expect(skipped['callbacks.terminal.signed-once']).toContain('callback receiver');
  expect(skipped['billing.freeze.video-720p-5s']).toContain('budget');
  expect(report.failed).toBe(0);
}, 60_000);
