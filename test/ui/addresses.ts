import { afterEach, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { ADMIN_TOKEN, DEMO_KEY, socialNote, startEmulator } from '../support/harness.ts';
import type { TestEmulator } from '../support/harness.ts';
import { HAS_CHROMIUM, openView, signIn, watchProblems } from '../support/browser-chromium.ts';
import type { FileBrowser } from '../support/browser-chromium.ts';
import { startReceiver } from '../support/receiver.ts';

// A page per thing (issue 41, item 9): every view of the dashboard and every task, callback message, call record
// and account has an address of its own, Back and Forward walk them, and a link opened in a new tab of the same
// browser is signed in without asking for the token again while the emulator runs; the page stores no token
// anywhere a script could read it. Its tests run in test/ui/dashboard.test.ts, on that file's chromium.

const VISIBLE_SECTIONS = "[...document.querySelectorAll('[data-view]')].filter((s) => s.checkVisibility()).map((s) => s.dataset.view)";

const hashOf = (page: Page): string => new URL(page.url()).hash;

/** Registers the tests of the dashboard's addresses; `screenshot` saves one as the dashboard test does. */
export function addressesTests(browser: FileBrowser, screenshot: (page: Page, name: string) => Promise<void>): void {
  let t: TestEmulator | null = null;
  afterEach(async () => {
    await t?.close();
    t = null;
  });

  const call = async (base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Record<string, unknown>> => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { Authorization: `Bearer ${path.startsWith('/v1') ? DEMO_KEY : ADMIN_TOKEN}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }), ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    expect(res.status, path).toBeLessThan(300);
    return (await res.json()) as Record<string, unknown>;
  };

  it.skipIf(!HAS_CHROMIUM)(
    'shows one view at a time and one item per page, each at its own address, which Back and Forward walk',
    async () => {
      const receiver = await startReceiver();
      t = await startEmulator({ allowInsecureWebhooks: true });
      const base = await t.emulator.listen(0);
      await call(base, 'POST', '/_emulator/accounts/acct_demo/webhook', { url: receiver.url });
      const task = String((await call(base, 'POST', '/v1/tasks', socialNote({ note: 'n1' }), { 'X-Emulator-Scenario': 'instant' }))['id']);
      await call(base, 'POST', '/_emulator/clock/advance', { seconds: 1 });
      await receiver.close();
      const [message] = (await call(base, 'GET', `/_emulator/webhooks/deliveries?task_id=${task}`))['data'] as { id: string }[];
      const [record] = (await call(base, 'GET', '/_emulator/records?path=/v1/tasks'))['data'] as { request_id: string }[];

      const { page } = await browser.page();
      const problems: string[] = [];
      watchProblems(page, problems);
      await signIn(page, base, ADMIN_TOKEN);
      // The first screen is the overview, and only it.
      expect(await page.evaluate(VISIBLE_SECTIONS)).toEqual(['overview']);
      expect(await page.title()).toBe('Overview · svc-emulator dashboard');

      await openView(page, 'Tasks');
      expect(hashOf(page)).toBe('#tasks');
      expect(await page.evaluate(VISIBLE_SECTIONS)).toEqual(['tasks']);
      await page.getByRole('table', { name: /^Tasks, newest first/ }).getByRole('button', { name: task }).click();
      await page.getByRole('heading', { name: `Task ${task}` }).waitFor();
      // The task's page: its own address and title; its list is set aside.
      expect(hashOf(page)).toBe(`#task=${task}`);
      expect(await page.title()).toBe(`Task ${task} · svc-emulator dashboard`);
      expect(await page.getByRole('table', { name: /^Tasks, newest first/ }).isVisible()).toBe(false);
      expect(await page.evaluate(VISIBLE_SECTIONS)).toEqual(['tasks']);
      await screenshot(page, 'dashboard-task-page.png');

      // Back to the list, back to the overview, and forward again to the task.
      await page.goBack();
      await page.getByRole('table', { name: /^Tasks, newest first/ }).waitFor();
      expect(hashOf(page)).toBe('#tasks');
      expect(await page.getByRole('heading', { name: `Task ${task}` }).isVisible()).toBe(false);
      await page.goBack();
      await page.getByRole('heading', { name: 'Overview', level: 2 }).waitFor();
      expect(await page.evaluate(VISIBLE_SECTIONS)).toEqual(['overview']);
      await page.goForward();
      await page.goForward();
      await page.getByRole('heading', { name: `Task ${task}` }).waitFor();

      // Each kind of item at its address, alone on its page; its page links back to its list.
      for (const [hash, heading, view, list] of [
        [`#delivery=${message!.id}`, `Message ${message!.id}`, 'callbacks', /^Callback messages of every task/],
        [`#record=${record!.request_id}`, `Call ${record!.request_id}`, 'records', /^Call records of \/v1 requests/],
        ['#account=acct_demo', 'Account acct_demo', 'accounts', /^Accounts and their points/],
      ] as const) {
        await page.goto(`${base}/_emulator/ui${hash}`);
        await page.getByRole('heading', { name: heading }).waitFor();
        expect(await page.evaluate(VISIBLE_SECTIONS), hash).toEqual([view]);
        expect(await page.getByRole('table', { name: list }).isVisible(), hash).toBe(false);
      }
      await page.getByRole('link', { name: 'All accounts' }).click();
      await page.getByRole('table', { name: /^Accounts and their points/ }).waitFor();
      expect(hashOf(page)).toBe('#accounts');
      expect(problems).toEqual([]);
    },
    60_000,
  );

  it.skipIf(!HAS_CHROMIUM)(
    'opens a link in a new tab signed in, with no token stored by the page; asks again after a sign-out or a restart',
    async () => {
      t = await startEmulator();
      const base = await t.emulator.listen(0);
      const task = String((await call(base, 'POST', '/v1/tasks', socialNote({ note: 'n1' }), { 'X-Emulator-Scenario': 'instant' }))['id']);
      const { page, context } = await browser.page();
      const problems: string[] = [];
      watchProblems(page, problems);
      await signIn(page, base, ADMIN_TOKEN);

      // The page keeps the token in no storage and no cookie a script can read.
      expect(await page.evaluate('JSON.stringify([{ ...sessionStorage }, { ...localStorage }, document.cookie])')).not.toContain(ADMIN_TOKEN);
      expect(await page.evaluate('document.cookie')).toBe('');

      // A link opened in a new tab: the task at once, no sign-in form.
      const tab = await context.newPage();
      watchProblems(tab, problems);
      try {
        await tab.goto(`${base}/_emulator/ui#task=${task}`);
        await tab.getByRole('heading', { name: `Task ${task}` }).waitFor();
        expect(await tab.getByLabel('Admin token').isVisible()).toBe(false);

        // Signed out in one tab, a new tab asks for the token.
        await page.getByRole('button', { name: 'Sign out' }).click();
        await tab.reload();
        await tab.getByLabel('Admin token').waitFor();
        await signIn(tab, base, ADMIN_TOKEN, `#task=${task}`);
        await tab.getByRole('heading', { name: `Task ${task}` }).waitFor();

        // The emulator restarted on the same port: what it kept is gone, the token is asked for again.
        const port = Number(new URL(base).port);
        await t.close();
        t = await startEmulator();
        await t.emulator.listen(port);
        await tab.reload();
        await tab.getByLabel('Admin token').waitFor();
        expect(await tab.getByRole('heading', { name: 'Clock', level: 2 }).isVisible()).toBe(false);
      } finally {
        await tab.close();
      }
      expect(problems.filter((p) => !/ERR_CONNECTION_REFUSED|status of 401/.test(p))).toEqual([]);
    },
    60_000,
  );

  it.skipIf(!HAS_CHROMIUM)(
    'stays signed out when Sign out is clicked while the kept sign-in is still reading, and sends nothing without a token',
    async () => {
      t = await startEmulator();
      const base = await t.emulator.listen(0);
      const { page, context } = await browser.page();
      await signIn(page, base, ADMIN_TOKEN);
      const tab = await context.newPage();
      const problems: string[] = [];
      watchProblems(tab, problems);
      const tokenless: string[] = [];
      tab.on('request', (req) => {
        if (req.url().includes('/_emulator/') && req.headers()['authorization'] === 'Bearer null') tokenless.push(req.url());
      });
      // The fault rules, read by the kept sign-in's first refresh, are held until the user has signed out.
      let release = (): void => undefined;
      const held = new Promise<void>((resolve) => (release = resolve));
      await tab.route('**/_emulator/faults', async (route) => {
        await held;
        await route.continue();
      });
      try {
        await tab.goto(`${base}/_emulator/ui`);
        await tab.getByRole('button', { name: 'Sign out' }).click();
        const answered = tab.waitForResponse((res) => res.url().endsWith('/_emulator/faults'));
        release();
        await answered;
        await tab.unroute('**/_emulator/faults');
        // Signing in anew runs after whatever the overtaken sign-in would still have done.
        await tab.getByLabel('Admin token').fill(ADMIN_TOKEN);
        await tab.getByRole('button', { name: 'Sign in' }).click();
        await tab.getByRole('status').filter({ hasText: 'Signed in.' }).waitFor();
      } finally {
        await tab.close();
      }
      expect(tokenless).toEqual([]);
      expect(problems).toEqual([]);
    },
    60_000,
  );
}
