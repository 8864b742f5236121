import { createEmulator } from 'svc-emulator';
import { ALL_CHECKS, BEHAVIOUR_CHECKS, runConformance } from 'svc-emulator/conformance';
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';

// The in-process snippet of docs/guides/ci-contract-tests.md, call for call, as an integrator's vitest suite runs it:
// the package imported by name, an emulator made in-process, the suite against it.

it("runs the docs' snippet: every check passes, none skipped", async () => {
  // -- the snippet --
  const emulator = await createEmulator({ clock: 'manual', adminToken: 'adm', allowInsecureWebhooks: true });
  const baseUrl = await emulator.listen(0);
  const report = await runConformance({ baseUrl, admin: { url: baseUrl, token: 'adm' } });
  await emulator.close();
  expect(report.failed).toBe(0);
  expect(report.skipped).toBe(0);
  // -- end of the snippet --

  // The suite's checks, then the rules of behaviour judged over everything its account saw.
  expect(report.passed).toBe(ALL_CHECKS.length + BEHAVIOUR_CHECKS.length);
  // It ran as its own account, funded through the control API, under no budget.
  expect(report.account?.id).toMatch(/^acct_[a-z0-9]+$/);
  expect(report.budget).toBeNull();
}, 60_000);

it('against an emulator that refuses http callback addresses, skips the callback check saying why, and fails nothing', async () => {
  // The README's earlier snippet: no allowInsecureWebhooks, a key and a budget. The emulator then refuses the
  // suite's receiver (http://127.0.0.1:…) as the real service does: that is conformance, so a skip, not a failure.
  const emulator = await createEmulator({ clock: 'manual', adminToken: 'adm' });
  try {
    const baseUrl = await emulator.listen(0);
    const report = await runConformance({ baseUrl, apiKey: 'sk-emulator-demo', admin: { url: baseUrl, token: 'adm' }, budget: 100_000 });
    expect(report.results.filter((r) => r.status === 'failed').map((r) => [r.id, r.failure?.message])).toEqual([]);
    const skipped = report.results.filter((r) => r.status === 'skipped');
    // With no callback received, the rules of behaviour about callbacks have nothing to judge, and say so.
    const unjudged = BEHAVIOUR_CHECKS.filter((c) => c.id.startsWith('callbacks.')).map((c) => c.id);
    expect(skipped.map((r) => r.id)).toEqual(['callbacks.terminal.signed-once', 'exercise.callbacks.retry-same-id', 'callbacks.canceled.sent', 'callbacks.failed.sent', 'callbacks.retries.every-gap', 'callbacks.rotation.two-signatures', ...unjudged]);
    for (const { id, reason } of skipped) {
      if (unjudged.includes(id)) {
        expect(reason).toMatch(/^no callback was received/);
        continue;
      }
      expect(reason).toMatch(/^the deployment refuses the receiver's address http:\/\/127\.0\.0\.1:\d+\/ \(callback addresses must be https and not internal/);
      expect(reason).toContain('--allow-insecure-webhooks');
    }
    expect(report.passed).toBe(ALL_CHECKS.length + BEHAVIOUR_CHECKS.length - skipped.length);

    // The emulator's call records of the suite's account (newest first): the balance probe's submission, its replay
    // and its cancel come last; the callback checks' refused submission is among the rest; nothing ever asked for a
    // task it did not get.
    const res = await fetch(`${baseUrl}/_emulator/records?account=${report.account?.id ?? 'none'}&limit=1000`, { headers: { Authorization: 'Bearer adm' } });
    const calls = ((await res.json()) as { data: { method: string; path: string; status: number; error_code: string | null }[] }).data;
    expect(calls.length).toBeGreaterThan(40);
    expect(calls.slice(0, 3).map((c) => `${c.method} ${c.path.replace(/T\w+/, 'T…')} ${c.status}`)).toEqual(['POST /v1/tasks/T…/cancel 200', 'POST /v1/tasks 200', 'POST /v1/tasks 200']);
    expect(calls.filter((c) => c.method === 'POST' && c.path === '/v1/tasks' && c.status === 422 && c.error_code === 'invalid_params').length).toBeGreaterThan(0);
    expect(calls.filter((c) => c.path.includes('undefined'))).toEqual([]);
  } finally {
    await emulator.close();
  }
}, 60_000);

it('is the snippet docs/guides/ci-contract-tests.md shows', () => {
  const readme = readFileSync(new URL('../../docs/guides/ci-contract-tests.md', import.meta.url), 'utf8');
  const block = /In your own test suite[^\n]*\n\n```ts\n([\s\S]*?)```/.exec(readme)?.[1];
  const test = readFileSync(new URL(import.meta.url), 'utf8');
  const snippet = /-- the snippet --\n([\s\S]*?)\s*\/\/ -- end of the snippet --/.exec(test)?.[1];
  const lines = (text: string | undefined): string[] => (text ?? '').split('\n').map((line) => line.trim()).filter((line) => line !== '' && !line.startsWith('import '));
  expect(lines(snippet).length).toBeGreaterThan(3);
  expect(lines(block)).toEqual(lines(snippet));
});
