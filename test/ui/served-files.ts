import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Download } from 'playwright-core';
import { ADMIN_TOKEN, DEMO_KEY, newAccount, startEmulator } from '../support/harness.ts';
import type { TestEmulator } from '../support/harness.ts';
import { HAS_CHROMIUM, signedInPage } from '../support/browser-chromium.ts';
import type { FileBrowser } from '../support/browser-chromium.ts';
import { runTask } from '../support/tasks.ts';

// Uploaded files opened in the tab signed in to the dashboard (issue 36, item 1): any key may upload a page, and
// /files shares the dashboard's origin, where the emulator keeps the tab's sign-in (an HttpOnly cookie for
// /_emulator/ui/sign-in, which gives the token back to the dashboard's own page). An HTML, SVG or XHTML file whose
// script would take the token and advance the clock is a download: no script of it runs, the clock stands, the
// tab stays on the dashboard. A picture or a video is shown inline, in an opaque origin that has no reach to the
// token. Its tests run in test/ui/dashboard.test.ts, on that file's chromium.

/** What each page's script does, if it ever runs: marks this origin's storage, takes the kept token and advances the clock with it. */
const ATTACK =
  "localStorage.setItem('ran', location.pathname);" +
  "fetch('/_emulator/ui/sign-in', { headers: { 'X-Emulator-Client': 'dashboard' } }).then(function (res) { return res.json(); })" +
  ".then(function (kept) { return fetch('/_emulator/clock/advance', { method: 'POST', headers: { Authorization: 'Bearer ' + kept.token, 'Content-Type': 'application/json' }, body: JSON.stringify({ seconds: 3600 }) }); })" +
  ".then(function (res) { document.title = 'advanced ' + res.status; });";

const PAGES: [string, string, string][] = [
  ['HTML', 'text/html', `<!doctype html><title>page</title><script>${ATTACK}</script>`],
  ['SVG', 'image/svg+xml', `<svg xmlns="http://www.w3.org/2000/svg"><script><![CDATA[${ATTACK}]]></script></svg>`],
  ['XHTML', 'application/xhtml+xml', `<html xmlns="http://www.w3.org/1999/xhtml"><head><title>page</title></head><body><script><![CDATA[${ATTACK}]]></script></body></html>`],
];

/**
 * The document's origin, and whether it can read the dashboard's storage (one in an opaque origin cannot), as
 * properties of an object the page evaluates.
 */
const REACH =
  "origin: self.origin, storage: (() => { try { return JSON.stringify({ ...sessionStorage, ...localStorage }); } catch { return 'denied'; } })()";

/** What the document gets asking the emulator for the kept sign-in as the dashboard does: the answer's text, or how it failed. */
const ASK_KEPT =
  "fetch('/_emulator/ui/sign-in', { headers: { 'X-Emulator-Client': 'dashboard' }, credentials: 'include' }).then((res) => res.text(), (err) => `refused: ${err.name}`)";

/** A 1×1 PNG. */
const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005000201ffa8e2f6ee0000000049454e44ae426082', 'hex');

/** Registers the tests of uploaded files opened in the dashboard's tab, on the chromium of test/ui/dashboard.test.ts. */
export function servedFilesTests(browser: FileBrowser): void {
  let t: TestEmulator;
  let base: string;
  beforeAll(async () => {
    t = await startEmulator();
    base = await t.emulator.listen(0);
  });
  afterAll(() => t.close());

  const upload = async (filename: string, type: string, bytes: Buffer): Promise<string> => {
    const res = await fetch(`${base}/v1/files`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${DEMO_KEY}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ filename, mime_type: type, content: bytes.toString('base64') }),
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as { url: string }).url;
  };

  it.skipIf(!HAS_CHROMIUM)(
    'gives an uploaded HTML, SVG or XHTML page opened in the signed-in tab as a download: none of its script runs, the clock stands',
    async () => {
      const { page, problems } = await signedInPage(browser, base, ADMIN_TOKEN);
      const dashboard = page.url();
      const clock = t.emulator.clock.now();
      for (const [name, type, text] of PAGES) {
        const url = await upload(`page-${name}`, type, Buffer.from(text));
        const downloaded = new Promise<Download | null>((resolve) => {
          page.once('download', resolve);
          setTimeout(() => resolve(null), 5_000);
        });
        // A navigation that becomes a download is aborted; one that shows the page loads it and runs its script.
        const opened = await page.goto(url).then(
          () => 'shown',
          (err: unknown) => String(err),
        );
        if (opened === 'shown') await page.waitForFunction("document.title.startsWith('advanced')", undefined, { timeout: 2_000 }).catch(() => undefined);
        const download = await downloaded;
        expect(download?.url(), `${name}: ${opened}`).toBe(url);
        await download?.delete();
        expect(page.url(), name).toBe(dashboard);
        expect(await page.evaluate("localStorage.getItem('ran')"), name).toBeNull();
        expect(t.emulator.clock.now(), name).toBe(clock);
      }
      // Still signed in, and nothing broke on the dashboard.
      expect(await page.getByRole('button', { name: 'Sign out' }).isVisible()).toBe(true);
      expect(problems).toEqual([]);
    },
    60_000,
  );

  it.skipIf(!HAS_CHROMIUM)(
    'shows an uploaded picture and a result video inline in the signed-in tab, in an opaque origin out of reach of the token',
    async () => {
      const { page, problems } = await signedInPage(browser, base, ADMIN_TOKEN);
      const image = await upload('dot.png', 'image/png', PNG);
      await page.goto(image);
      expect(await page.evaluate(`({ width: document.images[0]?.naturalWidth, ${REACH} })`)).toEqual({ width: 1, origin: 'null', storage: 'denied' });
      // Even a script run in it (as a test's can be) cannot get the kept sign-in: the request is cross-origin, and
      // the emulator allows it no preflight.
      expect(await page.evaluate(ASK_KEPT)).toBe('refused: TypeError');

      const { key } = await newAccount(t, '1000000.000');
      const task = await runTask(t, t.as(key), { model: 'video-gen-2.0-fast', input: { prompt: 'p', ratio: '16:9', duration: 4 } });
      const [file] = task.output.files as { url: string }[];
      await page.goto(file!.url);
      await page.locator('video').waitFor({ state: 'attached' });
      // Loaded as the document's media (media-src 'self'): its length is the record's, or the player says why not.
      const state = "(() => { const v = document.querySelector('video'); return v.error ? `error ${v.error.code}` : v.readyState >= 1 ? Math.round(v.duration) : 'loading'; })()";
      await expect.poll(() => page.evaluate(state)).toBe(4);
      expect(await page.evaluate(`({ ${REACH} })`)).toEqual({ origin: 'null', storage: 'denied' });
      // The one problem: the file's own policy refusing the fetch for the sign-in.
      expect(problems.filter((p) => !p.includes('/_emulator/ui/sign-in'))).toEqual([]);
    },
    60_000,
  );
}
