import type { Locator } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ADMIN_TOKEN } from '../support/harness.ts';
import { HAS_CHROMIUM, itServesPanelScript, openView, signedInPage } from '../support/browser-chromium.ts';
import type { FileBrowser } from '../support/browser-chromium.ts';
import { call, startWorld } from '../verdict/world.ts';
import type { World } from '../verdict/world.ts';

// The dashboard's Verdict panel, driven in chromium: a careless client over real HTTP sends a refused submit again
// unchanged, the panel judges that key and shows the failed check with its reason and the request ids, which open
// their call records; the stale-timestamp probe of an account whose receiver takes anything fails its check, and the
// probe's webhook-id opens the callback message. A failed verdict is never shown in green, in the light scheme or
// the dark. Its tests run in test/ui/dashboard.test.ts, on that file's chromium: a launch of its own cost seconds of
// CPU.

/** The colours a text is drawn with (its colour, and its background unless that is transparent), as [r, g, b]. */
async function coloursOf(target: Locator): Promise<number[][]> {
  const [color, background] = await target.evaluate((el) => {
    const style = el.ownerDocument.defaultView?.getComputedStyle(el);
    return [style?.color ?? '', style?.backgroundColor ?? ''];
  });
  return [color, background].flatMap((css) => {
    const [r = 0, g = 0, b = 0, alpha = 1] = (css.match(/[\d.]+/g) ?? []).map(Number);
    return alpha === 0 ? [] : [[r, g, b]];
  });
}

/** A colour read as green: its green channel over both the others. */
const greenish = ([r = 0, g = 0, b = 0]: number[]): boolean => g > r && g > b;

/** Registers the Verdict panel's tests, on the chromium of the file that calls it (test/ui/dashboard.test.ts). */
export function verdictPanelTests(browser: FileBrowser): void {
  let world: World;
  beforeAll(async () => {
    world = await startWorld();
  });
  afterAll(async () => {
    await world.close();
  });

  itServesPanelScript(() => world.t.emulator.app, 'verdict.js', 'createVerdict');
  const openPage = () => signedInPage(browser, world.base, ADMIN_TOKEN);

  it.skipIf(!HAS_CHROMIUM)(
    'shows a careless client’s failed check with its reason and evidence, filters by key, and probes a receiver',
    async () => {
      // The careless client: a submit refused with 422, sent again at once, unchanged.
      const incomplete = { model: 'social-notes-data', input: { mode: 'note' } };
      const first = await call(world, 'POST', '/v1/tasks', { body: incomplete });
      const again = await call(world, 'POST', '/v1/tasks', { body: incomplete });
      expect([first.status, again.status]).toEqual([422, 422]);

      const { page, problems } = await openPage();
      const panel = page.locator('section', { has: page.getByRole('heading', { name: 'Verdict', level: 2 }) });
      const checks = page.getByRole('table', { name: /^Checks of the verdict/ });
      await openView(page, 'Verdict');
      await checks.getByText('Not judged yet.').waitFor();

      // A key this world never held has no verdict (404 not_found), and the panel says so; the careless key's has
      // the failed check.
      await panel.getByLabel('Key').fill('sk-someone-else');
      await panel.getByRole('button', { name: 'Refresh verdict' }).click();
      await page.getByRole('status').filter({ hasText: /^No key sk-someone-else in this world\.$/ }).waitFor();
      await panel.getByText(/^No key sk-someone-else in this world\.$/).waitFor();
      await checks.getByText('Nothing to judge: this world never held it, nor saw it used.').waitFor();

      await panel.getByLabel('Key').fill(world.account.key);
      await panel.getByRole('button', { name: 'Refresh verdict' }).click();
      await page.getByRole('status').filter({ hasText: `Verdict for key ${world.account.key}: 1 check(s) failed.` }).waitFor();
      const failed = checks.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'client.errors.not-retried' }) });
      expect(await failed.getByRole('cell').allTextContents()).toEqual([
        'fail',
        'POST /v1/tasks sent again unchanged after 422 invalid_params',
        `${first.requestId} ${again.requestId}`,
      ]);
      await panel.getByText(/^A check failed for key sk-\S+: 0 pass, 1 fail, \d+ not exercised\.$/).waitFor();
      const untried = checks.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'receiver.rejects-stale-timestamp' }) });
      expect(await untried.getByRole('cell').nth(0).textContent()).toBe('not exercised');

      // A request id of the evidence opens its call record.
      await failed.getByRole('button', { name: String(again.requestId) }).click();
      await page.getByRole('heading', { name: `Call ${String(again.requestId)}` }).waitFor();
      await expect.poll(() => page.url()).toContain(`#record=${String(again.requestId)}`);

      // The probe: the receiver takes the stale delivery, so its check fails, with the probe's webhook-id.
      await openView(page, 'Verdict');
      await panel.getByLabel('Key').fill('');
      await panel.getByLabel('Account', { exact: true }).fill(world.account.id);
      await panel.getByLabel('Account to probe').fill(world.account.id);
      await panel.getByRole('button', { name: 'Send stale-timestamp probe' }).click();
      await page.getByRole('status').filter({ hasText: `the receiver answered 200.` }).waitFor();
      const webhookId = String(world.receiver.received.at(-1)?.headers['webhook-id']);
      expect(webhookId).toMatch(/^msg_/);
      expect(await page.getByRole('status').textContent()).toBe(`Stale-timestamp probe ${webhookId} sent to ${world.receiver.url}: the receiver answered 200.`);
      // The receiver failed its check by taking the probe: the line saying so is not in the colour of success.
      expect((await coloursOf(page.getByRole('status'))).filter(greenish)).toEqual([]);
      const stale = checks.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'receiver.rejects-stale-timestamp' }) });
      await stale.getByText(`the receiver answered 200 to the stale probe ${webhookId}`).waitFor();
      expect(await stale.getByRole('cell').nth(0).textContent()).toBe('fail');
      // Judged for the account: its requests (the careless client's) and its receiver's answers.
      await panel.getByText(/^A check failed for account acct_\S+: \d+ pass, 2 fail, \d+ not exercised\.$/).waitFor();

      await stale.getByRole('button', { name: webhookId }).click();
      await page.getByRole('heading', { name: `Message ${webhookId}` }).waitFor();
      // The one error in the console is chromium's note of the verdict refused for the key the world never held.
      expect(problems).toEqual(['Failed to load resource: the server responded with a status of 404 (Not Found)']);
    },
    60_000,
  );

  it.skipIf(!HAS_CHROMIUM)(
    'never shows a failed verdict in green: not its failed check, not its line, not the header’s line, in light or dark',
    async () => {
      const incomplete = { model: 'social-notes-data', input: { mode: 'note' } };
      for (let n = 0; n < 2; n++) expect((await call(world, 'POST', '/v1/tasks', { body: incomplete })).status).toBe(422);

      const { page } = await openPage();
      const panel = page.locator('section', { has: page.getByRole('heading', { name: 'Verdict', level: 2 }) });
      await openView(page, 'Verdict');
      await panel.getByLabel('Key').fill(world.account.key);
      await panel.getByRole('button', { name: 'Refresh verdict' }).click();
      // At least the one check; the probe of the test before may have failed the account's receiver too.
      const said = page.getByRole('status').filter({ hasText: new RegExp(`^Verdict for key ${world.account.key}: [1-9]\\d* check\\(s\\) failed\\.$`) });
      await said.waitFor();
      const failed = page
        .getByRole('table', { name: /^Checks of the verdict/ })
        .getByRole('row')
        .filter({ has: page.getByRole('rowheader', { name: 'client.errors.not-retried' }) });
      const shown = {
        'the header’s line': said,
        'the verdict line': panel.getByText(/^A check failed for key sk-\S+: /),
        'the failed check’s status': failed.getByRole('cell').first().getByText('fail', { exact: true }),
        'the failed check’s reason': failed.getByRole('cell').nth(1),
      };
      for (const colorScheme of ['light', 'dark'] as const) {
        await page.emulateMedia({ colorScheme });
        for (const [what, target] of Object.entries(shown)) {
          const colours = await coloursOf(target);
          expect(colours.length, `${what} (${colorScheme})`).toBeGreaterThan(0);
          expect(colours.filter(greenish), `${what} (${colorScheme}): ${JSON.stringify(colours)}`).toEqual([]);
        }
      }
      await page.emulateMedia({ colorScheme: null });
    },
    60_000,
  );
}
