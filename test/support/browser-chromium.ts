import { existsSync } from 'node:fs';
import { chromium } from 'playwright-core';
import request from 'supertest';
import { afterEach, expect, it } from 'vitest';
import { required } from './required-tools.ts';
import type { Browser, BrowserContext, BrowserContextOptions, Page } from 'playwright-core';

// Debian's chromium driven through playwright-core, for the dashboard's browser tests. One chromium serves a test
// file (a launch is seconds of CPU); each test has a context of its own: its own cookies, storage and
// permissions, as a fresh profile would give it, so no test sees another's sign-in or state.

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
  /** A new context (and its first page) in the file's chromium, launched on first use. */
  context(options?: BrowserContextOptions): Promise<BrowserContext>;
  /** Closes the file's chromium, if it was launched, and with it every context it opened (afterAll). */
  close(): Promise<void>;
}

/** The chromium of one test file: call once at its top, and close it in its afterAll. */
export function fileBrowser(): FileBrowser {
  let launched: Promise<Browser> | null = null;
  return {
    async context(options = {}) {
      launched ??= chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS });
      const context = await (await launched).newContext({ viewport: { width: 1280, height: 900 }, ...options });
      context.setDefaultTimeout(10_000);
      return context;
    },
    async close() {
      const browser = launched;
      launched = null;
      await (await browser?.catch(() => null))?.close();
    },
  };
}

/**
 * A page of `context` on the dashboard at `base`, signed in with `adminToken`, and the page's errors as they come
 * (an uncaught exception or a console error): a panel test ends by expecting none.
 */
export async function signedInPage(context: BrowserContext, base: string, adminToken: string): Promise<{ page: Page; problems: string[] }> {
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(String(error)));
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(message.text());
  });
  await page.goto(`${base}/_emulator/ui`);
  await page.getByLabel('Admin token').fill(adminToken);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('status').filter({ hasText: 'Signed in.' }).waitFor();
  return { page, problems };
}

/**
 * For a panel's tests: a function giving a page signed in on the dashboard at `base()`, each in a new context of
 * `browser`; the contexts it opened are closed after each test.
 */
export function panelPages(browser: FileBrowser, base: () => string, adminToken: string): () => Promise<{ page: Page; problems: string[] }> {
  const contexts: BrowserContext[] = [];
  afterEach(async () => {
    for (const context of contexts.splice(0)) await context.close();
  });
  return async () => {
    const context = await browser.context();
    contexts.push(context);
    return signedInPage(context, base(), adminToken);
  };
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
