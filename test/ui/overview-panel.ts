import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import type { Emulator } from '../../src/index.ts';
import { ADMIN_TOKEN, DEMO_KEY, socialNote, startEmulator } from '../support/harness.ts';
import { HAS_CHROMIUM, itServesPanelScript, signedInPage } from '../support/browser-chromium.ts';
import type { FileBrowser } from '../support/browser-chromium.ts';
import { startReceiver } from '../support/receiver.ts';
import type { Receiver } from '../support/receiver.ts';

// The dashboard's overview, driven in chromium: the page opens on the counts of tasks by state and model, callback
// messages failed and pending and the last errors, each a link that opens its list filtered; and one search box
// that opens a task (or request, message, account) by its id in one step. Its tests run in
// test/ui/dashboard.test.ts, on that file's chromium.

/** Registers the overview's tests; `screenshot` saves one as the dashboard test does (SCREENSHOTS, UPDATE_SCREENSHOTS). */
export function overviewPanelTests(browser: FileBrowser, screenshot: (page: Page, name: string) => Promise<void>): void {
  let emulator: Emulator;
  let receiver: Receiver;
  let base: string;
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: Record<string, unknown> }> => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { Authorization: `Bearer ${path.startsWith('/v1') ? DEMO_KEY : ADMIN_TOKEN}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }), ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const submit = async (note: string, scenario: string): Promise<string> =>
    String((await call('POST', '/v1/tasks', socialNote({ note }), { 'X-Emulator-Scenario': scenario })).body['id']);

  beforeAll(async () => {
    // Every callback is answered 500.
    receiver = await startReceiver((_n, res) => res.writeHead(500).end('down'));
    ({ emulator } = await startEmulator({ allowInsecureWebhooks: true }));
    base = await emulator.listen(0);
    expect((await call('POST', '/_emulator/accounts/acct_demo/webhook', { url: receiver.url })).status).toBe(200);
  });
  afterAll(async () => {
    await emulator.close();
    await receiver.close();
  });

  itServesPanelScript(() => emulator.app, 'search.js', 'createSearch');

  it.skipIf(!HAS_CHROMIUM)(
    'opens on the counts of tasks, callbacks and errors, each a link to its list filtered, and finds a task by id in one step',
    async () => {
      // A task whose callback fails until the emulator gives up, then: two succeeded (one callback still retried),
      // one failed, one canceled, one queued, and a refused submission.
      const gaveUp = await submit('n1', 'default');
      expect((await call('POST', `/_emulator/tasks/${gaveUp}/complete`, {})).status).toBe(200);
      await expect.poll(() => receiver.received.length).toBe(1);
      for (let i = 0; i < 6; i++) await call('POST', '/_emulator/clock/advance', { seconds: 21600 });
      await expect.poll(async () => (await call('GET', '/_emulator/webhooks/deliveries?status=failed')).body['data']).toHaveLength(1);
      const retried = await submit('n2', 'default');
      expect((await call('POST', `/_emulator/tasks/${retried}/complete`, {})).status).toBe(200);
      const failed = await submit('n3', 'default');
      expect((await call('POST', `/_emulator/tasks/${failed}/fail`, { code: 'generation_failed' })).status).toBe(200);
      const canceled = await submit('n4', 'default');
      expect((await call('POST', `/_emulator/tasks/${canceled}/cancel`)).status).toBe(200);
      const queued = await submit('n5', 'default');
      const refused = await call('POST', '/v1/tasks', { model: 'no-such-model', input: {} });
      expect(refused.status).toBeGreaterThanOrEqual(400);
      const refusedCode = String((refused.body['error'] as { code: string }).code);
      await expect.poll(async () => (await call('GET', '/_emulator/webhooks/deliveries?status=pending')).body['data']).toHaveLength(3);

      const { page, problems } = await signedInPage(browser, base, ADMIN_TOKEN);
      // The overview is the first card, the search box its first field.
      const overview = page.locator('section', { has: page.getByRole('heading', { name: 'Overview', level: 2 }) });
      expect(await page.locator('main section.card').first().getAttribute('aria-labelledby')).toBe('overview-heading');
      const byState = overview.getByRole('list', { name: 'Tasks by state' });
      await byState.getByRole('link', { name: '2 succeeded' }).waitFor();
      for (const name of ['1 queued', '0 processing', '1 failed', '1 canceled']) await byState.getByRole('link', { name }).waitFor();
      await overview.getByRole('list', { name: 'Tasks by model' }).getByRole('link', { name: '5 social-notes' }).waitFor();
      const callbacks = overview.getByRole('list', { name: 'Callbacks' });
      await callbacks.getByRole('link', { name: '1 failed' }).waitFor();
      await callbacks.getByRole('link', { name: '3 pending' }).waitFor();
      const lastErrors = overview.getByRole('list', { name: 'Last errors' });
      await lastErrors.getByRole('link', { name: new RegExp(`^4\\d\\d ${refusedCode}$`) }).waitFor();
      await screenshot(page, 'dashboard-overview.png');

      // A count opens its list's view, filtered that way; Back comes to the overview again.
      const tasks = page.getByRole('table', { name: /^Tasks, newest first/ });
      const shownTasks = () => tasks.locator('tbody tr[data-task]').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-task')));
      await byState.getByRole('link', { name: '1 failed' }).click();
      await expect.poll(shownTasks).toEqual([failed]);
      expect(new URL(page.url()).hash).toBe('#tasks');
      expect(await overview.isVisible()).toBe(false);
      expect(await page.locator('#task-status').inputValue()).toBe('failed');
      await page.goBack();
      await byState.getByRole('link', { name: '2 succeeded' }).click();
      await expect.poll(async () => (await shownTasks()).sort()).toEqual([gaveUp, retried].sort());
      await page.goBack();
      const messages = page.getByRole('table', { name: /^Callback messages of every task/ });
      await callbacks.getByRole('link', { name: '1 failed' }).click();
      await expect.poll(() => messages.locator('tbody tr').count()).toBe(1);
      expect(await messages.locator('tbody tr').textContent()).toContain(gaveUp);
      expect(await page.locator('#callback-status').inputValue()).toBe('failed');
      await page.goBack();
      await lastErrors.getByRole('link', { name: new RegExp(refusedCode) }).click();
      expect(await page.locator('#record-error').inputValue()).toBe(refusedCode);
      const records = page.getByRole('table', { name: /^Call records of \/v1 requests/ });
      await expect.poll(() => records.locator('tbody tr').count()).toBe(1);

      // One step from the first screen: the id pasted into the box and Enter open the task, its heading in view.
      await page.goBack();
      await page.evaluate('window.scrollTo(0, 0)');
      const box = page.getByRole('searchbox', { name: 'Find by id' });
      await box.fill(queued);
      await box.press('Enter');
      const heading = page.getByRole('heading', { name: `Task ${queued}` });
      await heading.waitFor();
      await page.getByRole('status').filter({ hasText: `Found task ${queued}.` }).waitFor();
      expect(new URL(page.url()).hash).toBe(`#task=${queued}`);
      await expect.poll(async () => (await heading.boundingBox())?.y ?? -1).toBeGreaterThan(0);
      expect(((await heading.boundingBox())?.y ?? 10_000) < (page.viewportSize()?.height ?? 0)).toBe(true);
      // A request id and an account id too; an unknown id is said so.
      const request = String(((await call('GET', '/_emulator/records?limit=1')).body['data'] as { request_id: string }[])[0]?.request_id);
      await page.goBack();
      await box.fill(request);
      await box.press('Enter');
      await page.getByRole('heading', { name: `Call ${request}` }).waitFor();
      await page.goBack();
      await box.fill('acct_demo');
      await box.press('Enter');
      await page.getByRole('status').filter({ hasText: 'Found account acct_demo.' }).waitFor();
      expect(new URL(page.url()).hash).toBe('#account=acct_demo');
      await page.goBack();
      await box.fill('T20261123090000NOPE00');
      await box.press('Enter');
      const unknown = page.getByRole('status').filter({ hasText: 'No task T20261123090000NOPE00 in the world shown.' });
      await unknown.waitFor();
      expect(await unknown.getAttribute('class')).toContain('error');
      // The unknown id's 404 is the one failed request, which chromium logs as a console error.
      expect(problems).toEqual(['Failed to load resource: the server responded with a status of 404 (Not Found)']);
    },
    60_000,
  );
}
