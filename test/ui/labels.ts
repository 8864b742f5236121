import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Locator, Page } from 'playwright-core';
import { ADMIN_TOKEN, socialNote } from '../support/harness.ts';
import { HAS_CHROMIUM, itServesPanelScript, signedInPage } from '../support/browser-chromium.ts';
import type { FileBrowser } from '../support/browser-chromium.ts';
import type { Received } from '../support/receiver.ts';
import { addFaults, advance, call, carefulReceiver, startWorld } from '../verdict/world.ts';
import type { World } from '../verdict/world.ts';

// Labels that tell the truth (issue 41, item 10), driven in chromium against a real workload: a receiver that
// verifies every delivery with the Standard Webhooks library refuses a forged one (a callback fault) and a stale
// probe, which the page shows as refused, as they should be, apart from failures and not counted among them; a probe
// the receiver takes is its fault, and shown so. An attempt names its two clocks (the emulator's virtual one, the
// real time of webhook-timestamp); every time says its zone; a failed task says what failed where its output would
// be; a video's files are links and its cover is shown. Its tests run in test/ui/dashboard.test.ts, on that file's
// chromium.

type Delivery = { id: string; status: string; attempts: { kind: string; webhook_timestamp: number }[] };
type FileRecord = { url: string; cover_url: string; expires_at: string };

/** `2026-11-23 09:00:05 \\+08:00`: Unix seconds as the page shows a time of the emulator's zone, for a RegExp. */
const beijing = (unixSeconds: number): string => `${new Date((unixSeconds + 8 * 3600) * 1000).toISOString().slice(0, 19).replace('T', ' ')} \\+08:00`;

/** Registers the labels' tests; `screenshot` saves one as the dashboard test does (SCREENSHOTS, UPDATE_SCREENSHOTS). */
export function labelsTests(browser: FileBrowser, screenshot: (page: Page, name: string) => Promise<void>): void {
  let world: World;
  // The receiver verifies each delivery and refuses those that do not verify, until told to take anything.
  let takeAnything = false;
  beforeAll(async () => {
    world = await startWorld((w) => (n, res) => (takeAnything ? void res.writeHead(200).end('ok') : carefulReceiver(w)(n, res)));
  });
  afterAll(() => world.close());

  itServesPanelScript(() => world.t.emulator.app, 'labels.js', 'outcomeOf');
  itServesPanelScript(() => world.t.emulator.app, 'outputs.js', 'outputOf');

  const submit = async (body: Record<string, unknown>, scenario: string): Promise<string> => {
    const submitted = await call(world, 'POST', '/v1/tasks', { body, headers: { 'X-Emulator-Scenario': scenario } });
    expect(submitted.status).toBe(200);
    return String(submitted.body['id']);
  };
  const probe = async (): Promise<{ webhook_id: string; status: number }> => {
    const res = await world.t.admin.post('/_emulator/verdict/probe', { account: world.account.id });
    expect(res.status).toBe(200);
    return res.body as { webhook_id: string; status: number };
  };
  const open = async (page: Page, hash: string, heading: string): Promise<void> => {
    await page.goto(`${world.base}/_emulator/ui#${hash}`);
    await page.getByRole('heading', { name: heading }).waitFor();
  };
  const cellTexts = (row: Locator) => row.getByRole('cell').allTextContents();
  const colourOf = (locator: Locator, property: 'color' | 'backgroundColor') => 
    locator.evaluate((el, p) => el.ownerDocument.defaultView?.getComputedStyle(el)[p] ?? '', property);

  it.skipIf(!HAS_CHROMIUM)(
    'shows a forged or stale delivery refused as it should, apart from failures and not counted as failing; one taken as the receiver’s fault; names the two clocks',
    async () => {
      // A task's callback with a forged delivery before it, the stale probe (both refused), then a probe taken.
      await addFaults(world, [{ match: { account: world.account.id }, fault: { kind: 'forged_signature' }, times: 1 }]);
      const taskId = await submit(socialNote(), 'instant');
      await advance(world, 0);
      const listed = (await world.t.admin.get(`/_emulator/webhooks/deliveries?task_id=${taskId}`)).body.data as Delivery[];
      const forged = listed.find((d) => d.attempts[0]?.kind === 'forged_signature') as Delivery;
      const stale = await probe();
      takeAnything = true;
      const taken = await probe();
      takeAnything = false;
      expect([forged.attempts.length, stale.status, taken.status]).toEqual([1, 400, 200]);
      // The emulator lists the two refused as failed (a delivery sent once is failed unless taken).
      const failed = (await world.t.admin.get('/_emulator/webhooks/deliveries?status=failed')).body.data as Delivery[];
      expect(failed.map((d) => d.id).sort()).toEqual([forged.id, stale.webhook_id].sort());
      const forgedHeaders = world.receiver.received.find((r: Received) => r.headers['webhook-id'] === forged.id)?.headers;
      const forgedTimestamp = Number(forgedHeaders?.['webhook-timestamp']);
      expect(forgedTimestamp).toBe(forged.attempts[0]?.webhook_timestamp);

      const { page, problems } = await signedInPage(browser, world.base, ADMIN_TOKEN);
      // Every time says its zone, the header's clock first.
      await expect.poll(() => page.locator('#clock-now').textContent()).toBe('2026-11-23 09:00:00 +08:00');

      // The overview counts no refused delivery among the failed, and says why.
      const callbacks = page.getByRole('list', { name: 'Callbacks' });
      await callbacks.getByRole('link', { name: '0 failed' }).waitFor();
      await page.getByText('2 forged or stale deliveries refused, as they should: not counted as failed.').waitFor();

      // The forged delivery: refused, as it should, with its kind, in no failure's red; its two clocks named.
      await open(page, `delivery=${forged.id}`, `Message ${forged.id}`);
      const detail = page.locator('#delivery-detail');
      await detail.getByText(/^refused, as it should: a delivery with a forged signature, which a correct receiver turns away/).waitFor();
      const attempts = detail.getByRole('table', { name: `Attempts of ${forged.id}` });
      expect(await attempts.getByRole('columnheader').allTextContents()).toEqual([
        '#', 'Kind', 'Sent at (emulator clock, virtual)', 'webhook-timestamp (Unix seconds)', 'Answer', 'Duration (ms)', 'Response excerpt', 'Request headers',
      ]);
      const refusedRow = attempts.getByRole('row').nth(1);
      const cells = await cellTexts(refusedRow);
      expect(cells.slice(0, 5)).toEqual([
        '1',
        'forged_signature',
        '2026-11-23 09:00:00 +08:00',
        // Real time: the receiver's own clock, far from the virtual one.
        expect.stringMatching(new RegExp(`^${forgedTimestamp} = ${beijing(forgedTimestamp)}real time: \\d+ (days|h \\d+ min|min( \\d+ s)?|s) (behind|ahead of) the emulator clock$`)),
        '400 refused, as it should (forged signature)',
      ]);
      expect(await refusedRow.getAttribute('class')).toBe('expected');
      await detail.getByText(/^Two clocks meet here\. Sent at is the emulator clock: virtual time/).waitFor();
      await detail.getByText('refused, as it should (forged signature), listed as failed').waitFor();
      const refusedColour = await colourOf(refusedRow.getByRole('cell').nth(4), 'color');
      const refusedBadge = await colourOf(refusedRow.locator('.badge'), 'backgroundColor');
      await screenshot(page, 'dashboard-labels-message.png');

      // The stale probe refused, the same way; its webhook-timestamp set back on purpose.
      await open(page, `delivery=${stale.webhook_id}`, `Message ${stale.webhook_id}`);
      const staleRow = detail.getByRole('table', { name: `Attempts of ${stale.webhook_id}` }).getByRole('row').nth(1);
      await staleRow.getByText('400 refused, as it should (stale timestamp)').waitFor();
      expect((await cellTexts(staleRow))[3]).toMatch(/stale on purpose: set back from the time of the send$/);
      expect(await staleRow.getAttribute('class')).toBe('expected');

      // The probe taken: the receiver's fault, in red.
      await open(page, `delivery=${taken.webhook_id}`, `Message ${taken.webhook_id}`);
      await detail.getByText(/^accepted, a fault of the receiver: a delivery with a stale timestamp/).waitFor();
      const takenRow = detail.getByRole('table', { name: `Attempts of ${taken.webhook_id}` }).getByRole('row').nth(1);
      await takenRow.getByText('200 accepted: should have been refused (stale timestamp)').waitFor();
      expect(await takenRow.getAttribute('class')).toBe('not-ok accepted');
      expect(await colourOf(takenRow.getByRole('cell').nth(4), 'color')).not.toBe(refusedColour);
      expect(await colourOf(takenRow.locator('.badge'), 'backgroundColor')).not.toBe(refusedBadge);

      // The list of messages: the refused ones apart (not failing), the taken one failing.
      await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Callbacks', exact: true }).click();
      const list = page.getByRole('table', { name: /^Callback messages of every task/ });
      const rowOf = (id: string) => list.getByRole('row').filter({ has: page.getByRole('button', { name: id, exact: true }) });
      await rowOf(forged.id).getByText('refused, as it should (forged signature), listed as failed').waitFor();
      // (The message opened last is chosen in the list too.)
      expect(await rowOf(forged.id).getAttribute('class')).toBe('expected');
      expect(await rowOf(stale.webhook_id).getAttribute('class')).toBe('expected');
      expect(await rowOf(taken.webhook_id).getAttribute('class')).toBe('chosen not-ok');
      expect((await cellTexts(rowOf(taken.webhook_id)))[5]).toBe('200 at 09:00:00 +08:00');
      await screenshot(page, 'dashboard-labels-callbacks.png');

      // The task's own page shows its forged message beside the real one, and its times with their zone.
      await open(page, `task=${taskId}`, `Task ${taskId}`);
      await page.locator('#deliveries').getByText('refused, as it should (forged signature), listed as failed').waitFor();
      expect(await page.locator('#task-timeline').textContent()).toContain('Queued at 2026-11-23 09:00:00 +08:00');
      expect(problems).toEqual([]);
    },
    90_000,
  );

  it.skipIf(!HAS_CHROMIUM)(
    'says what failed where a failed task’s output would be, and shows a video’s files as links and its cover',
    async () => {
      const failedId = await submit(socialNote(), 'default');
      const failed = await world.t.admin.post(`/_emulator/tasks/${failedId}/fail`, { code: 'generation_failed' });
      expect(failed.status).toBe(200);
      const { code, message } = failed.body.error as { code: string; message: string };
      const queuedId = await submit(socialNote(), 'default');
      const videoId = await submit({ model: 'video-gen-2.0-fast', input: { prompt: 'a grey sky', ratio: '16:9', duration: 4 } }, 'instant');
      await advance(world, 0);
      const video = (await world.t.admin.get(`/_emulator/tasks/${videoId}`)).body.task as { status: string; output: { files: FileRecord[] } };
      expect(video.status).toBe('succeeded');
      const [file] = video.output.files as [FileRecord];

      const { page, problems } = await signedInPage(browser, world.base, ADMIN_TOKEN);
      const payloads = page.locator('#task-payloads');
      await open(page, `task=${failedId}`, `Task ${failedId}`);
      await payloads.getByText(`Output: none, the task failed: ${code} ${message}`).waitFor();
      expect(await payloads.textContent()).not.toContain('none yet');
      // A task still queued may still promise one.
      await open(page, `task=${queuedId}`, `Task ${queuedId}`);
      await payloads.getByText('Output: none yet.').waitFor();

      // The video: its file and its cover are links to a new tab, the cover shown, loaded from this origin.
      await open(page, `task=${videoId}`, `Task ${videoId}`);
      const files = page.getByRole('list', { name: `Files of ${videoId}` });
      const link = files.getByRole('link', { name: file.url, exact: true });
      expect([await link.getAttribute('href'), await link.getAttribute('target'), await link.getAttribute('rel')]).toEqual([file.url, '_blank', 'noopener']);
      const coverLink = files.getByRole('link', { name: file.cover_url, exact: true });
      expect([await coverLink.getAttribute('target'), await coverLink.getAttribute('rel')]).toEqual(['_blank', 'noopener']);
      const cover = files.getByRole('img', { name: 'Cover of video 1' });
      expect(await cover.getAttribute('src')).toBe(file.cover_url);
      await expect.poll(() => cover.evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth)).toBeGreaterThan(0);
      await files.getByText(`expires ${file.expires_at.replace('T', ' ').replace('+08:00', ' +08:00')}`, { exact: false }).waitFor();
      await files.evaluate((el) => el.scrollIntoView({ block: 'center' }));
      await screenshot(page, 'dashboard-labels-task.png');

      // Opened, the file is a tab of its own that has no hold on the dashboard's.
      const [tab] = await Promise.all([page.context().waitForEvent('page'), link.click()]);
      await tab.waitForLoadState('domcontentloaded');
      expect([tab.url(), await tab.evaluate('window.opener === null')]).toEqual([file.url, true]);
      await tab.close();
      expect(problems).toEqual([]);
    },
    90_000,
  );
}
