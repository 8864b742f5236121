import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Page, Request } from 'playwright-core';
import type { Emulator } from '../../src/index.ts';
import { ADMIN_TOKEN, DEMO_KEY, socialNote, startEmulator } from '../support/harness.ts';
import { HAS_CHROMIUM, signIn, signedInPage, watchProblems } from '../support/browser-chromium.ts';
import type { FileBrowser } from '../support/browser-chromium.ts';

// The dashboard's world picker and overview, driven in chromium: the emulator's admin token lists the default world
// and every session, and each choice shows that world only, every control call naming it (and none counting as a use
// of the session); a session's own admin token shows just its session, as the list's `scope` says, even when the
// session's accounts are the default world's very own; a session deleted while shown takes the page back to the
// default world. Its tests run in test/ui/dashboard.test.ts, on that file's chromium.

interface Made {
  id: string;
  name: string;
  key: string;
  token: string;
  task: string;
}

const WORLD_HEADER = 'x-emulator-session';
/** What every poll of the page reads. */
const POLLED = ['/_emulator/clock', '/_emulator/accounts', '/_emulator/tasks', '/_emulator/records', '/_emulator/webhooks/deliveries', '/_emulator/faults'];

/** Registers the picker's tests, on the chromium of the file that calls it (test/ui/dashboard.test.ts). */
export function sessionsPickerTests(browser: FileBrowser): void {
  let emulator: Emulator;
  let base: string;
  let a: Made;
  let b: Made;
  let own: string;

  const callAt = async (at: string, method: string, path: string, token: string, body?: unknown): Promise<Record<string, unknown>> => {
    const res = await fetch(`${at}${path}`, {
      method,
      headers: { Authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    expect(res.status, `${method} ${path}`).toBeLessThan(300);
    return (await res.json()) as Record<string, unknown>;
  };
  const call = (method: string, path: string, token: string, body?: unknown) => callAt(base, method, path, token, body);
  const submit = async (key: string, note: string): Promise<string> => String((await call('POST', '/v1/tasks', key, socialNote({ note })))['id']);
  /** A session made through the control API (with `extra` fields of its request), with one task submitted with its key. */
  async function newSession(name: string, extra: Record<string, unknown> = {}): Promise<Made> {
    const made = await call('POST', '/_emulator/sessions', ADMIN_TOKEN, { name, clock: { mode: 'manual' }, ...extra });
    const key = String(made['key']);
    return { id: String(made['id']), name, key, token: String(made['admin_token']), task: await submit(key, `https://notes.example.com/n/${name}`) };
  }

  beforeAll(async () => {
    ({ emulator } = await startEmulator());
    base = await emulator.listen(0);
    own = await submit(DEMO_KEY, 'https://notes.example.com/n/default');
    a = await newSession('Worker A');
    b = await newSession('Worker B', { ttl_seconds: 3600 });
  });
  afterAll(async () => {
    await emulator.close();
  });

  const picker = (page: Page) => page.getByLabel('World', { exact: true });
  const options = (page: Page) => picker(page).locator('option').allTextContents();
  // The rows the tasks list holds, on its view or not (the overview is shown; the list is read all the same).
  const tasks = (page: Page) => page.locator('table:has(#tasks-body)');
  const overview = (page: Page) => page.locator('#overview-facts');
  /** The task ids the tasks table shows, once it shows `expected` (the page polls). */
  async function expectTasks(page: Page, expected: string[]): Promise<void> {
    const shown = async () => (await tasks(page).locator('tbody tr[data-task]').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-task')))).sort();
    await expect.poll(shown).toEqual([...expected].sort());
  }
  const factOf = (page: Page, name: string) => overview(page).locator('div', { has: page.getByRole('term').filter({ hasText: new RegExp(`^${name}$`) }) }).getByRole('definition');

  it.skipIf(!HAS_CHROMIUM)(
    'lists every session for the emulator’s token, shows only the chosen world (every call naming it), keeps the choice over a reload, and falls back when it is deleted',
    async () => {
      const { page, problems } = await signedInPage(browser, base, ADMIN_TOKEN);
      expect(await options(page)).toEqual(['Default world', `Worker A (${a.id})`, `Worker B (${b.id})`]);
      await expectTasks(page, [own]);
      await expect.poll(() => factOf(page, 'World').textContent()).toBe('Default world');
      expect(await factOf(page, 'Sessions beside it').textContent()).toBe('2 (choose one in the World picker)');

      // Session A: its task only, its overview, and every control call of the page names it.
      const usedBefore = (await call('GET', `/_emulator/sessions/${a.id}`, ADMIN_TOKEN))['last_used_at'];
      const calls: Request[] = [];
      page.on('request', (req) => {
        const path = new URL(req.url()).pathname;
        if (path.startsWith('/_emulator/') && !path.startsWith('/_emulator/ui')) calls.push(req);
      });
      await picker(page).selectOption(a.id);
      await page.getByRole('status').filter({ hasText: `Showing session Worker A (${a.id}).` }).waitFor();
      const chosenFrom = calls.length;
      await expectTasks(page, [a.task]);
      await expect.poll(() => factOf(page, 'World').textContent()).toBe('Worker A');
      expect(await factOf(page, 'Session').textContent()).toBe(a.id);
      expect(await factOf(page, 'Tasks').textContent()).toBe('1');
      expect(await factOf(page, 'Expires').textContent()).toBe('never');
      expect(await page.locator('#clock-mode').textContent()).toBe('manual');
      // A whole poll after the choice: each of its reads names session A.
      const paths = () => new Set(calls.slice(chosenFrom).map((req) => new URL(req.url()).pathname));
      await expect.poll(() => POLLED.every((path) => paths().has(path)), { timeout: 5_000 }).toBe(true);
      const worldCalls = calls.slice(chosenFrom).filter((req) => !new URL(req.url()).pathname.startsWith('/_emulator/sessions'));
      expect(worldCalls.map((req) => req.headers()[WORLD_HEADER])).toEqual(worldCalls.map(() => a.id));
      // The sessions themselves are read as the default world lists them, naming none.
      expect(calls.slice(chosenFrom).filter((req) => new URL(req.url()).pathname.startsWith('/_emulator/sessions')).map((req) => req.headers()[WORLD_HEADER] ?? null)).not.toContain(a.id);
      // Watching is no use: the page's calls, all marked as the dashboard's, leave the session's last use where its
      // client left it.
      expect(worldCalls.map((req) => req.headers()['x-emulator-client'])).toEqual(worldCalls.map(() => 'dashboard'));
      expect((await call('GET', `/_emulator/sessions/${a.id}`, ADMIN_TOKEN))['last_used_at']).toBe(usedBefore);

      // The choice survives a reload of the tab.
      await page.reload();
      await expect.poll(() => picker(page).inputValue()).toBe(a.id);
      await expectTasks(page, [a.task]);

      // Session B, then the default world: neither session's task, and no call names a session.
      await picker(page).selectOption(b.id);
      await expectTasks(page, [b.task]);
      await expect.poll(() => factOf(page, 'World').textContent()).toBe('Worker B');
      expect(await factOf(page, 'Time-to-live').textContent()).toBe("60 min without a client's request (this page's own do not count)");
      await picker(page).selectOption({ label: 'Default world' });
      await page.getByRole('status').filter({ hasText: 'Showing the default world.' }).waitFor();
      const defaultFrom = calls.length;
      await expectTasks(page, [own]);
      await expect.poll(() => factOf(page, 'World').textContent()).toBe('Default world');
      expect(calls.slice(defaultFrom).map((req) => req.headers()[WORLD_HEADER] ?? null).filter(Boolean)).toEqual([]);

      // Session B deleted while this tab shows it: back to the default world, with a message, and the choice dropped.
      await picker(page).selectOption(b.id);
      await expectTasks(page, [b.task]);
      await call('DELETE', `/_emulator/sessions/${b.id}`, ADMIN_TOKEN);
      await page.getByRole('status').filter({ hasText: `Session Worker B (${b.id}) no longer exists on this emulator: showing the default world.` }).waitFor();
      expect(await picker(page).inputValue()).toBe('');
      await expectTasks(page, [own]);
      await expect.poll(() => options(page)).toEqual(['Default world', `Worker A (${a.id})`]);
      // Reloaded, with one session left: still the emulator's token, which reaches the default world too.
      await page.reload();
      await expectTasks(page, [own]);
      expect(await options(page)).toEqual(['Default world', `Worker A (${a.id})`]);
      expect(await picker(page).inputValue()).toBe('');
      // The calls made to the session gone, each refused 404, are the only errors in the console.
      expect(problems.filter((p) => !p.includes('status of 404'))).toEqual([]);
    },
    60_000,
  );

  it.skipIf(!HAS_CHROMIUM)('shows just its own session to a session’s admin token, in a tab of its own', async () => {
    const { context } = await browser.page();
    const tab = await context.newPage();
    try {
      const problems: string[] = [];
      watchProblems(tab, problems);
      await signIn(tab, base, a.token);
      expect(await options(tab)).toEqual([`Worker A (${a.id})`]);
      expect(await picker(tab).inputValue()).toBe(a.id);
      await expectTasks(tab, [a.task]);
      await expect.poll(() => factOf(tab, 'World').textContent()).toBe('Worker A');
      expect(await factOf(tab, 'Accounts').textContent()).toBe('1');
      expect(problems).toEqual([]);
    } finally {
      await tab.close();
    }
  }, 30_000);

  it.skipIf(!HAS_CHROMIUM)('tells the two tokens apart by the list’s scope, even for a lone session holding the default world’s accounts', async () => {
    // An emulator of its own, with one session made from the default world's state: the same accounts, ids and
    // webhook secrets alike (only the keys renamed, since a key lives in one world), so nothing but the list's
    // `scope` tells whose token lists that one session.
    const other = await startEmulator();
    try {
      const at = await other.emulator.listen(0);
      const exported = await callAt(at, 'POST', '/_emulator/state/export', ADMIN_TOKEN);
      const keys = (exported['keys'] as Record<string, unknown>[]).map((k, i) => ({ ...k, key: `sk-copied-into-a-session-${i}` }));
      const copy = await callAt(at, 'POST', '/_emulator/sessions', ADMIN_TOKEN, { name: 'Copy', state: { ...exported, keys } });
      const id = String(copy['id']);
      expect(copy['account']).toMatchObject({ id: 'acct_demo' });
      const mine = String((await callAt(at, 'POST', '/v1/tasks', DEMO_KEY, socialNote({ note: 'https://notes.example.com/n/mine' })))['id']);

      // The emulator's token: the default world, shown, and the session beside it.
      const { page, problems } = await signedInPage(browser, at, ADMIN_TOKEN);
      expect(await options(page)).toEqual(['Default world', `Copy (${id})`]);
      expect(await picker(page).inputValue()).toBe('');
      await expectTasks(page, [mine]);
      await expect.poll(() => factOf(page, 'Sessions beside it').textContent()).toBe('1 (choose one in the World picker)');

      // The session's token, in a tab of its own: that session alone, whose world has none of the default's tasks.
      const tab = await page.context().newPage();
      try {
        watchProblems(tab, problems);
        // The browser is signed in with the emulator's token (the first tab's): out first, then in with the session's.
        await tab.goto(`${at}/_emulator/ui`);
        await tab.getByRole('button', { name: 'Sign out' }).click();
        await signIn(tab, at, String(copy['admin_token']));
        expect(await options(tab)).toEqual([`Copy (${id})`]);
        expect(await picker(tab).inputValue()).toBe(id);
        await expect.poll(() => factOf(tab, 'World').textContent()).toBe('Copy');
        await expectTasks(tab, []);
      } finally {
        await tab.close();
      }
      expect(problems).toEqual([]);
    } finally {
      await other.close();
    }
  }, 30_000);
}
