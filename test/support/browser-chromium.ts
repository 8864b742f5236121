import { existsSync } from 'node:fs';
import { chromium } from 'playwright-core';
import request from 'supertest';
import { afterEach, expect, it } from 'vitest';
import { required } from './required-tools.ts';
import type { Browser, BrowserContext, Page } from 'playwright-core';

// Debian's chromium driven through playwright-core, for the dashboard's browser tests. One chromium, and one page in
// it, serve a test file: a launch is seconds of CPU, and each new page another two (a renderer process started, the
// dashboard loaded into it for the first time). No test sees another's state all the same: each test's emulator
// listens on a port of its own, so its dashboard is an origin of its own (sessionStorage, where the dashboard keeps
// its token, and permissions go by origin), and after each test the page is handed back as a fresh profile's would
// be: the test's listeners, routes and viewport gone, the storage, cookies and permissions it used cleared, blank.

export const CHROMIUM = '/usr/bin/chromium';
export const HAS_CHROMIUM = existsSync(CHROMIUM);

const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/**
 * For a browser test file: a notice when chromium is missing (the browser tests skip), and a test that fails
 * instead where the run requires chromium (SVC_TEST_REQUIRE, as CI sets it), so no browser test passes by skipping.
 */
export function itHasChromiumWhereRequired(file: string): void {
  if (!HAS_CHROMIUM) console.warn(`${file}: skipping the browser tests: ${CHROMIUM} is missing (apt-get install chromium).`);
  it('has chromium where the run requires it (SVC_TEST_REQUIRE: CI), so the browser tests cannot pass by skipping', () => {
    if (required('chromium')) expect(HAS_CHROMIUM, `${CHROMIUM} is missing`).toBe(true);
  });
}

export interface FileBrowser {
  /**
   * The file's page (chromium is launched on first use), for the running test only: after the test it is reset
   * (see the header) and blank again for the next. The context is the page's, for permissions.
   */
  page(): Promise<{ page: Page; context: BrowserContext }>;
  /** Closes the file's chromium, if it was launched, and with it the page (afterAll). */
  close(): Promise<void>;
}

const VIEWPORT = { width: 1280, height: 900 };

/** The chromium of one test file: call once at its top level (it registers the reset after each test), close it in its afterAll. */
export function fileBrowser(): FileBrowser {
  let launched: Promise<Browser> | null = null;
  let opened: { page: Page; context: BrowserContext } | null = null;
  let lent = false;
  afterEach(async () => {
    if (!lent || !opened) return;
    lent = false;
    const { page, context } = opened;
    if (page.isClosed()) {
      opened = null;
      return;
    }
    await page.removeAllListeners();
    await page.unrouteAll({ behavior: 'wait' });
    if (/^https?:/.test(page.url())) {
      await page.evaluate('sessionStorage.clear(); localStorage.clear()').catch(() => undefined);
    }
    await page.goto('about:blank');
    await page.setViewportSize(VIEWPORT);
    await context.clearCookies();
    await context.clearPermissions();
  });
  return {
    async page() {
      if (lent) throw new Error('the file’s page is already lent to this test');
      launched ??= chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS });
      if (!opened) {
        const context = await (await launched).newContext({ viewport: VIEWPORT });
        context.setDefaultTimeout(10_000);
        opened = { page: await context.newPage(), context };
      }
      lent = true;
      return opened;
    },
    async close() {
      const browser = launched;
      launched = null;
      opened = null;
      await (await browser?.catch(() => null))?.close();
    },
  };
}

/** Collects `page`'s errors as they come (an uncaught exception or a console error) into `problems`: a test ends by expecting none. */
export function watchProblems(page: Page, problems: string[]): void {
  page.on('pageerror', (error) => problems.push(String(error)));
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(message.text());
  });
}

/** Opens the dashboard at `base` (at `hash`, a link into it) and signs in with `adminToken`. */
export async function signIn(page: Page, base: string, adminToken: string, hash = ''): Promise<void> {
  await page.goto(`${base}/_emulator/ui${hash}`);
  await page.getByLabel('Admin token').fill(adminToken);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('status').filter({ hasText: 'Signed in.' }).waitFor();
}

/** The file's page on the dashboard at `base`, signed in with `adminToken`, and its problems (`watchProblems`). */
export async function signedInPage(browser: FileBrowser, base: string, adminToken: string): Promise<{ page: Page; problems: string[] }> {
  const { page } = await browser.page();
  const problems: string[] = [];
  watchProblems(page, problems);
  await signIn(page, base, adminToken);
  return { page, problems };
}

/** The test that the dashboard serves a panel's script, `ui/<file>`, as JavaScript exporting `factory`. */
export function itServesPanelScript(app: () => Parameters<typeof request>[0], file: string, factory: string): void {
  it('serves the panel’s script with the dashboard’s other files', async () => {
    const res = await request(app()).get(`/_emulator/ui/${file}`);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toContain('text/javascript');
    expect(res.text).toContain(`export function ${factory}`);
  });
}

/** Goes to one of the dashboard's views by its section link (`Tasks`, `Faults`, …), as a user would. */
export async function openView(page: Page, name: string): Promise<void> {
  const link = page.locator('nav').getByRole('link', { name, exact: true });
  await link.click();
  await page.locator('nav a[aria-current="page"]').filter({ hasText: name }).waitFor({ state: 'attached' });
}
