import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Emulator } from '../../src/index.ts';
import { ADMIN_TOKEN, DEMO_KEY, startEmulator } from '../support/harness.ts';
import { HAS_CHROMIUM, itServesPanelScript, signedInPage } from '../support/browser-chromium.ts';
import type { FileBrowser } from '../support/browser-chromium.ts';

// The dashboard's Faults panel, driven in chromium: the rules in force with their counts, the form for the common
// ones, removing one, clearing all; and an injected reset in the records. Its tests run in test/ui/dashboard.test.ts,
// on that file's chromium: a launch of its own cost seconds of CPU.

/** Registers the Faults panel's tests, on the chromium of the file that calls it (test/ui/dashboard.test.ts). */
export function faultsPanelTests(browser: FileBrowser): void {
  let emulator: Emulator;
  let base: string;
  beforeAll(async () => {
    ({ emulator } = await startEmulator());
    base = await emulator.listen(0);
  });
  afterAll(async () => {
    await emulator.close();
  });

  itServesPanelScript(() => emulator.app, 'faults.js', 'createFaults');
  const openPage = () => signedInPage(browser, base, ADMIN_TOKEN);

  const listed = (): { id: string; matched: number; hits: number; fault: Record<string, unknown>; times?: number; match?: Record<string, unknown> }[] =>
    emulator.control.faults.list().data as never;
  const models = () => fetch(`${base}/v1/models`, { headers: { Authorization: `Bearer ${DEMO_KEY}` } });

  it.skipIf(!HAS_CHROMIUM)(
    'adds the common faults from the form, shows each rule’s hits, removes one and clears all',
    async () => {
      const { page, problems } = await openPage();
      const panel = page.locator('section', { has: page.getByRole('heading', { name: 'Faults', level: 2 }) });
      const rules = page.getByRole('table', { name: 'Fault rules in force, in the order they are tried' });
      await page.getByRole('link', { name: 'Faults' }).click();
      await rules.getByText('No fault rules').waitFor();

      // The next 2 service_unavailable errors of /v1/models.
      await panel.getByLabel('Fault', { exact: true }).selectOption('error');
      await panel.getByLabel('Code').selectOption('service_unavailable');
      await panel.getByLabel('Path').fill('/v1/models');
      await panel.getByLabel('Next N requests').fill('2');
      await panel.getByRole('button', { name: 'Add fault rule' }).click();
      await page.getByRole('status').filter({ hasText: 'Fault rule fault_1 added.' }).waitFor();
      expect(listed()).toEqual([{ id: 'fault_1', match: { path: '/v1/models' }, fault: { kind: 'error', code: 'service_unavailable' }, times: 2, matched: 0, hits: 0 }]);
      const first = rules.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'fault_1' }) });
      expect(await first.textContent()).toContain('error service_unavailable');
      expect(await first.textContent()).toContain('first 2');
      await first.getByText('0 of 0').waitFor();
      expect((await models()).status).toBe(503);
      await first.getByText('1 of 1').waitFor();

      // A latency (its milliseconds field shows only for it), then a reset of every task submission.
      await panel.getByLabel('Fault', { exact: true }).selectOption('latency');
      expect(await panel.getByLabel('Code').isHidden()).toBe(true);
      await panel.getByLabel('Latency (ms)').fill('250');
      await panel.getByLabel('Path').fill('/v1/tasks*');
      await panel.getByLabel('Next N requests').fill('');
      await panel.getByRole('button', { name: 'Add fault rule' }).click();
      await page.getByRole('status').filter({ hasText: 'Fault rule fault_2 added.' }).waitFor();
      await panel.getByLabel('Fault', { exact: true }).selectOption('reset');
      await panel.getByLabel('Path').fill('/v1/chat/completions');
      await panel.getByRole('button', { name: 'Add fault rule' }).click();
      await page.getByRole('status').filter({ hasText: 'Fault rule fault_3 added.' }).waitFor();
      expect(listed().map((r) => [r.id, r.fault, r.times ?? null])).toEqual([
        ['fault_1', { kind: 'error', code: 'service_unavailable' }, 2],
        ['fault_2', { kind: 'latency', ms: 250 }, null],
        ['fault_3', { kind: 'reset' }, null],
      ]);
      await rules.getByRole('row').filter({ hasText: '250 ms before the answer' }).waitFor();

      // A reset request shows in the call records as reset, not as the status it never got.
      await expect(fetch(`${base}/v1/chat/completions`, { method: 'POST', headers: { Authorization: `Bearer ${DEMO_KEY}`, 'Content-Type': 'application/json' }, body: '{"model":"svc-text-lite","messages":[{"role":"user","content":"hi"}]}' })).rejects.toThrow();
      await page.getByRole('table', { name: /^Call records of \/v1 requests/ }).getByRole('row').filter({ hasText: 'POST /v1/chat/completions' }).getByText('reset', { exact: true }).waitFor();

      // Remove one, then clear the rest.
      await rules.getByRole('button', { name: 'Remove fault_2' }).click();
      await page.getByRole('status').filter({ hasText: 'Fault rule fault_2 removed.' }).waitFor();
      expect(listed().map((r) => r.id)).toEqual(['fault_1', 'fault_3']);
      await expect.poll(() => rules.getByRole('button', { name: 'Remove fault_2' }).count()).toBe(0);
      await panel.getByRole('button', { name: 'Clear all fault rules' }).click();
      await page.getByRole('status').filter({ hasText: '2 fault rule(s) removed.' }).waitFor();
      await rules.getByText('No fault rules').waitFor();
      expect(listed()).toEqual([]);
      expect(problems).toEqual([]);
    },
    60_000,
  );
}
