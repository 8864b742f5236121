import { execFile } from 'node:child_process';
import { copyFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { fileBrowser, HAS_CHROMIUM, itHasChromiumWhereRequired, openView, signIn, watchProblems } from '../support/browser-chromium.ts';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import request from 'supertest';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { Emulator, EmulatorOptions } from '../../src/index.ts';
import { ADMIN_TOKEN, DEMO_KEY, newAccount, socialNote, startEmulator } from '../support/harness.ts';
import { failFirst, startReceiver } from '../support/receiver.ts';
import type { Answer, Receiver } from '../support/receiver.ts';
import { addressesTests } from './addresses.ts';
import { faultsPanelTests } from './faults-panel.ts';
import { scenariosPanelTests } from './scenarios-panel.ts';
import { labelsTests } from './labels.ts';
import { overviewPanelTests } from './overview-panel.ts';
import { verdictPanelTests } from './verdict-panel.ts';
import { servedFilesTests } from './served-files.ts';
import { sessionsPickerTests } from './sessions-picker.ts';

// The dashboard at /_emulator/ui, and the control calls it needs. The browser tests drive Debian's chromium
// through playwright-core; without /usr/bin/chromium they are skipped, so the suite still runs on a developer's
// machine (CI installs chromium in .ci/run). One chromium serves the file and the panels' tests it registers
// (faults-panel.ts, verdict-panel.ts, served-files.ts, sessions-picker.ts), on one page reset after each test
// (test/support/browser-chromium.ts).
// Screenshots are taken on request only (each costs chromium a fraction of a second): SCREENSHOTS=1 saves them to
// test-results/, UPDATE_SCREENSHOTS=1 to docs/ (the dashboard guide's) as well.

itHasChromiumWhereRequired('test/ui/dashboard.test.ts');
const RESULTS = fileURLToPath(new URL('../../test-results/', import.meta.url));
const DOCS = fileURLToPath(new URL('../../docs/', import.meta.url));
const UPDATE_SCREENSHOTS = process.env['UPDATE_SCREENSHOTS'] === '1';
const SCREENSHOTS = UPDATE_SCREENSHOTS || process.env['SCREENSHOTS'] === '1';
const BROWSER_TEST_MS = 90_000;
const run = promisify(execFile);

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
const browser = fileBrowser();
afterAll(() => browser.close());

async function testEmulator(options: EmulatorOptions = {}) {
  const t = await startEmulator(options);
  cleanups.push(() => t.close());
  return t;
}

// ---------------------------------------------------------------------------------------------------------------
// The page's files and the control calls only the dashboard uses

it('serves the dashboard page, its modules and its style without a token', async () => {
  const t = await testEmulator();
  for (const [path, type] of [
    ['/_emulator/ui', 'text/html'],
    ['/_emulator/ui/', 'text/html'],
    ['/_emulator/ui/app.js', 'text/javascript'],
    ['/_emulator/ui/api.js', 'text/javascript'],
    ['/_emulator/ui/dom.js', 'text/javascript'],
    ['/_emulator/ui/curl.js', 'text/javascript'],
    ['/_emulator/ui/scenarios.js', 'text/javascript'],
    ['/_emulator/ui/accounts.js', 'text/javascript'],
    ['/_emulator/ui/actions.js', 'text/javascript'],
    ['/_emulator/ui/callbacks.js', 'text/javascript'],
    ['/_emulator/ui/clock.js', 'text/javascript'],
    ['/_emulator/ui/details.js', 'text/javascript'],
    ['/_emulator/ui/fault-form.js', 'text/javascript'],
    ['/_emulator/ui/filters.js', 'text/javascript'],
    ['/_emulator/ui/labels.js', 'text/javascript'],
    ['/_emulator/ui/ledger.js', 'text/javascript'],
    ['/_emulator/ui/links.js', 'text/javascript'],
    ['/_emulator/ui/messages.js', 'text/javascript'],
    ['/_emulator/ui/outputs.js', 'text/javascript'],
    ['/_emulator/ui/overview.js', 'text/javascript'],
    ['/_emulator/ui/records.js', 'text/javascript'],
    ['/_emulator/ui/refresher.js', 'text/javascript'],
    ['/_emulator/ui/session.js', 'text/javascript'],
    ['/_emulator/ui/store.js', 'text/javascript'],
    ['/_emulator/ui/tasks.js', 'text/javascript'],
    ['/_emulator/ui/worlds.js', 'text/javascript'],
    ['/_emulator/ui/style.css', 'text/css'],
  ] as const) {
    const res = await request(t.emulator.app).get(path);
    expect(res.status, path).toBe(200);
    expect(res.headers['content-type'], path).toContain(type);
    expect(res.headers['content-security-policy'], path).toContain("connect-src 'self'");
    expect(res.headers['x-content-type-options'], path).toBe('nosniff');
  }
  const page = await request(t.emulator.app).get('/_emulator/ui');
  expect(page.text).toContain('<main id="main"');
  expect(page.text).not.toContain('http://');
});

it('answers 404 not_found for a file the dashboard does not have', async () => {
  const t = await testEmulator();
  const res = await request(t.emulator.app).get('/_emulator/ui/package.json');
  expect(res.status).toBe(404);
  expect(res.body.error.code).toBe('not_found');
});

it('lists every account, oldest first, as GET /_emulator/accounts/{id} shows each', async () => {
  const t = await testEmulator();
  const other = await newAccount(t, '12.000');
  const res = await t.admin.get('/_emulator/accounts');
  expect(res.status).toBe(200);
  expect(res.body.data.map((a: { id: string }) => a.id)).toEqual(['acct_demo', other.id]);
  for (const account of res.body.data) {
    expect((await t.admin.get(`/_emulator/accounts/${account.id}`)).body).toEqual(account);
  }
});

it('refuses the account list without the admin token: 401 unauthorized', async () => {
  const t = await testEmulator();
  const res = await t.admin.send((r) => r.get('/_emulator/accounts'));
  expect(res.status).toBe(401);
  expect(res.body.error.code).toBe('unauthorized');
});

it("cancels any account's queued task from the control API with a full refund", async () => {
  const t = await testEmulator();
  const submitted = await t.api.post('/v1/tasks', socialNote());
  const res = await t.admin.post(`/_emulator/tasks/${submitted.body.id}/cancel`);
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({
    id: submitted.body.id,
    status: 'canceled',
    error: { code: 'canceled' },
    points: { frozen: '40.000', charged: '0.000', refunded: '40.000' },
  });
  const ledger = await t.admin.get('/_emulator/accounts/acct_demo/ledger');
  expect(ledger.body.data.filter((e: { task_id: string }) => e.task_id === submitted.body.id).map((e: { kind: string }) => e.kind)).toEqual([
    'freeze',
    'refund',
  ]);
  expect((await t.api.get(`/v1/tasks/${submitted.body.id}`)).body.status).toBe('canceled');
});

it('refuses to cancel a finished task from the control API: 409 task_not_cancelable', async () => {
  const t = await testEmulator();
  const submitted = await t.api.post('/v1/tasks', socialNote());
  await t.admin.post(`/_emulator/tasks/${submitted.body.id}/complete`, {});
  const res = await t.admin.post(`/_emulator/tasks/${submitted.body.id}/cancel`);
  expect(res.status).toBe(409);
  expect(res.body.error.code).toBe('task_not_cancelable');
});

it('answers 404 not_found when canceling a task that does not exist from the control API', async () => {
  const t = await testEmulator();
  const res = await t.admin.post('/_emulator/tasks/T000000000000nope/cancel');
  expect(res.status).toBe(404);
  expect(res.body.error.code).toBe('not_found');
});

// ---------------------------------------------------------------------------------------------------------------
// The page in a browser

interface Read {
  path: string;
  query: URLSearchParams;
  body: { data: unknown[]; versions?: string[]; count?: number };
}

interface World {
  base: string;
  emulator: Emulator;
  receiver: Receiver;
  context: BrowserContext;
  page: Page;
  /** Page errors and console errors: none may happen. */
  problems: string[];
  /** Every GET the page made of the control API, with its answer (kept only when asked for: `watchReads`). */
  reads: Read[];
  post(path: string, body: unknown, headers?: Record<string, string>, token?: string): Promise<Record<string, unknown>>;
  /** A social-notes task of the demo account (instant unless a scenario is named); resolves with its id. */
  submit(note: string, scenario?: string): Promise<string>;
  advance(seconds: number): Promise<unknown>;
  admin(path: string): Promise<Record<string, unknown> & { data: Record<string, unknown>[] }>;
}

/** An emulator on a manual clock whose demo account calls back `answer`, and chromium on its dashboard, signed out. */
async function openWorld(answer?: Answer, options: { recordContent?: boolean } = {}, watchReads = false): Promise<World> {
  const receiver = await startReceiver(answer);
  cleanups.push(() => receiver.close());
  const { emulator } = await testEmulator({ allowInsecureWebhooks: true, ...options });
  const base = await emulator.listen(0);
  const post: World['post'] = async (path, body, headers = {}, token = path.startsWith('/v1') ? DEMO_KEY : ADMIN_TOKEN) => {
    const res = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    expect(res.status, path).toBeLessThan(300);
    return (await res.json()) as Record<string, unknown>;
  };
  const admin: World['admin'] = async (path) =>
    (await (await fetch(`${base}${path}`, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } })).json()) as Awaited<ReturnType<World['admin']>>;
  await post('/_emulator/accounts/acct_demo/webhook', { url: receiver.url });

  const { page, context } = await browser.page();
  const problems: string[] = [];
  const reads: Read[] = [];
  watch(page, problems, watchReads ? reads : null);
  return {
    base,
    emulator,
    receiver,
    context,
    page,
    problems,
    reads,
    post,
    admin,
    submit: async (note, scenario = 'instant') =>
      String((await post('/v1/tasks', socialNote({ note }), { 'X-Emulator-Scenario': scenario }))['id']),
    advance: (seconds) => post('/_emulator/clock/advance', { seconds }),
  };
}

/** Collects the page's errors, and with `reads` its control API reads (each answer's body fetched from chromium). */
function watch(page: Page, problems: string[], reads: Read[] | null): void {
  watchProblems(page, problems);
  if (!reads) return;
  page.on('response', (res) => {
    const url = new URL(res.url());
    if (res.request().method() !== 'GET' || !url.pathname.startsWith('/_emulator/') || url.pathname.startsWith('/_emulator/ui')) return;
    res.json().then(
      (body: Read['body']) => reads.push({ path: url.pathname, query: url.searchParams, body }),
      () => undefined,
    );
  });
}

/** Waits until the page has made a read, after the `from`-th, that `matches`; resolves with it. */
async function readSince(reads: Read[], from: number, matches: (read: Read) => boolean): Promise<Read> {
  await expect.poll(() => reads.slice(from).some(matches), { timeout: 10_000 }).toBe(true);
  return reads.slice(from).find(matches) as Read;
}

/** Scrolls an element to the top of the page, just below the sticky header. */
const toTop = (target: Locator): Promise<void> => target.evaluate((el) => el.scrollIntoView({ block: 'start' }));

/** With SCREENSHOTS=1, saves a screenshot to test-results/; with UPDATE_SCREENSHOTS=1, to docs/ as well. */
async function screenshot(page: Page, name: string, options: { fullPage?: boolean } = {}): Promise<void> {
  if (!SCREENSHOTS) return;
  await mkdir(RESULTS, { recursive: true });
  const file = join(RESULTS, name);
  await page.screenshot({ path: file, fullPage: options.fullPage ?? false });
  if (UPDATE_SCREENSHOTS) await copyFile(file, join(DOCS, name));
}

const tasksTable = (page: Page) => page.getByRole('table', { name: /^Tasks, newest first/ });
const callbacksTable = (page: Page) => page.getByRole('table', { name: /^Callback messages of every task/ });
const recordsTable = (page: Page) => page.getByRole('table', { name: /^Call records of \/v1 requests/ });

it.skipIf(!HAS_CHROMIUM)(
  'keeps the clock and the last action in a sticky header, pages the tasks, and polls only what changed',
  async () => {
    const w = await openWorld(undefined, {}, true);
    const { page } = w;
    const first = await w.submit('n1', 'default');

    // Sign in; the sign-in survives a reload of the tab, which opens on the overview.
    await signIn(page, w.base, ADMIN_TOKEN);
    await page.reload();
    await page.getByRole('heading', { name: 'Clock', level: 2 }).waitFor();
    await expect.poll(() => page.locator('#clock-now').textContent()).toBe('2026-11-23 09:00:00 +08:00');
    expect(await page.locator('#clock-mode').textContent()).toBe('manual');
    await page.getByRole('heading', { name: 'Overview', level: 2 }).waitFor();
    await openView(page, 'Tasks');
    const tasks = tasksTable(page);
    await tasks.getByRole('row').filter({ hasText: first }).getByText('queued', { exact: true }).waitFor();

    // A new task: the next poll of the task list sends only it, the ledger only its freeze after the entry held.
    const from = w.reads.length;
    const second = await w.submit('n2', 'default');
    const taskRead = await readSince(w.reads, from, (r) => r.path === '/_emulator/tasks' && r.query.has('known') && r.body.versions?.length === 2);
    expect(taskRead.body.data).toEqual([expect.objectContaining({ task: expect.objectContaining({ id: second }) })]);
    const ledgerRead = await readSince(w.reads, from, (r) => r.path === '/_emulator/accounts/acct_demo/ledger' && r.body.count === 3);
    expect(ledgerRead.query.get('after')).toBe('1');
    expect(ledgerRead.body.data.map((e) => (e as { n: number }).n)).toEqual([2, 3]);
    await tasks.getByRole('row').filter({ hasText: second }).waitFor();
    // Then, nothing having changed, a poll reads no task and no entry but the newest it holds.
    const quietFrom = w.reads.length;
    const quiet = await readSince(w.reads, quietFrom, (r) => r.path === '/_emulator/tasks' && r.body.data.length === 0);
    expect(quiet.body.versions).toEqual(taskRead.body.versions);
    await readSince(w.reads, quietFrom, (r) => r.path === '/_emulator/accounts/acct_demo/ledger' && r.query.get('after') === '2' && r.body.data.length === 1);
    await expect.poll(() => page.locator('#traffic').textContent()).toMatch(/^The last refresh read \d+ bytes in \d+ requests\.$/);

    // One virtual minute later (from the keyboard, in the header) both have succeeded; no stray null after points.
    await page.getByRole('button', { name: 'Advance 1 min' }).press('Enter');
    await page.getByRole('status').filter({ hasText: 'Clock advanced 60 s to 2026-11-23 09:01:00 +08:00.' }).waitFor();
    await tasks.getByRole('row').filter({ hasText: first }).getByText('succeeded', { exact: true }).waitFor();
    expect(await page.locator('#clock-now').textContent()).toBe('2026-11-23 09:01:00 +08:00');
    await tasks.getByRole('button', { name: first }).click();
    await page.getByRole('heading', { name: `Task ${first}` }).waitFor();
    await page.locator('#task-facts').getByText('Refunded').waitFor();
    expect(await page.locator('#task-facts').textContent()).not.toContain('null');
    await page.goBack();

    // A failed action says why in the header, which stays in view at the bottom of the page.
    const slow = await w.submit('n3', 'slow');
    await page.getByLabel('Seconds').fill('31');
    await page.locator('#advance-custom').getByRole('button', { name: 'Advance' }).click();
    await page.getByRole('status').filter({ hasText: 'Clock advanced 31 s' }).waitFor();
    await tasks.getByRole('row').filter({ hasText: slow }).getByText('processing', { exact: true }).waitFor();
    await tasks.getByRole('button', { name: slow }).click();
    await page.getByRole('heading', { name: `Task ${slow}` }).waitFor();
    await page.getByRole('button', { name: 'Cancel task' }).click();
    const refused = page.getByRole('status').filter({ hasText: 'Refused: 409 task_not_cancelable' });
    await refused.waitFor();
    expect(await refused.getAttribute('class')).toContain('error');
    await page.getByRole('link', { name: 'All tasks' }).click();
    await page.evaluate('window.scrollTo(0, document.body.scrollHeight)');
    for (const inHeader of [page.locator('#clock-now'), refused]) {
      const box = await inHeader.boundingBox();
      expect(box && box.y >= 0 && box.y + box.height <= 900).toBe(true);
    }

    // Two tasks a page: the oldest is on the second.
    await page.locator('#task-limit').fill('2');
    await page.locator('#task-limit').press('Enter');
    await expect.poll(() => tasks.getByRole('row').count()).toBe(3);
    await page.getByRole('button', { name: 'Older tasks' }).click();
    await tasks.getByRole('row').filter({ hasText: first }).waitFor();
    expect(await page.locator('#tasks-pager').textContent()).toContain('Page 2');
    expect(await tasks.getByRole('row').count()).toBe(2);
    await page.getByRole('button', { name: 'Newer tasks' }).click();
    await tasks.getByRole('row').filter({ hasText: slow }).waitFor();

    // Text scenarios show how their calls stream, not task timings.
    await openView(page, 'Scenarios');
    const textSlow = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'text-slow', exact: true }) });
    expect(await textSlow.textContent()).toContain('text calls');
    expect(await textSlow.textContent()).toContain('first token after 800 ms, 40 ms between chunks');
    expect(await textSlow.textContent()).not.toMatch(/queued \+ processing/);
    const failing = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'text-service-unavailable-midstream', exact: true }) });
    expect(await failing.textContent()).toContain('error event service_unavailable after 5 chunks, full refund');
    const defaults = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'default', exact: true }) });
    expect(await defaults.textContent()).toContain('1 s + 8 s (social-notes-data)');

    // The refused cancel is the one failed request, which chromium logs as a console error.
    expect(w.problems).toEqual(['Failed to load resource: the server responded with a status of 409 (Conflict)']);
  },
  BROWSER_TEST_MS,
);

it.skipIf(!HAS_CHROMIUM)(
  "shows a task's payloads and each callback attempt's request and answer, and fails another with a refund",
  async () => {
    // The first callback is answered 500, its retry a minute later 200.
    const w = await openWorld(failFirst(1));
    const { page } = w;
    await signIn(page, w.base, ADMIN_TOKEN);
    await openView(page, 'Tasks');
    const first = await w.submit('n1', 'default');
    const tasks = tasksTable(page);
    await tasks.getByRole('row').filter({ hasText: first }).getByText('queued', { exact: true }).waitFor();
    await page.getByRole('button', { name: 'Advance 1 min' }).click();
    await page.getByRole('status').filter({ hasText: 'Clock advanced 60 s' }).waitFor();
    await page.getByRole('button', { name: 'Advance 1 min' }).click();
    await page.getByRole('status').filter({ hasText: 'Clock advanced 60 s to 2026-11-23 09:02:00 +08:00.' }).waitFor();
    expect(w.receiver.received).toHaveLength(2);

    await tasks.getByRole('button', { name: first }).click();
    await page.getByRole('heading', { name: `Task ${first}` }).waitFor();
    expect(new URL(page.url()).hash).toBe(`#task=${first}`);
    await page.getByRole('list').filter({ hasText: 'Processing from' }).getByText(/^Succeeded/).waitFor();

    // Input and output as JSON, each a block that folds away.
    const input = page.locator('#task-payloads').getByLabel('Input', { exact: true });
    expect(JSON.parse((await input.textContent()) ?? '')).toEqual({ mode: 'note', note: 'n1', agree: true });
    const output = page.locator('#task-payloads').getByLabel('Output', { exact: true });
    expect(JSON.parse((await output.textContent()) ?? '')).toMatchObject({ files: expect.any(Array) });
    await page.locator('#task-payloads summary').filter({ hasText: 'Input' }).click();
    await input.waitFor({ state: 'hidden' });
    await page.locator('#task-payloads summary').filter({ hasText: 'Input' }).click();
    await input.waitFor();

    // The message's body once, then each attempt: its answer and the headers it sent, as the receiver got them.
    const body = page.locator('#deliveries').getByLabel('Body sent on every attempt');
    await page.locator('#deliveries summary').filter({ hasText: 'Body sent on every attempt' }).click();
    await body.waitFor();
    expect(JSON.parse((await body.textContent()) ?? '')).toEqual(JSON.parse(w.receiver.received[0]?.raw.toString('utf8') ?? ''));
    const attempts = page.locator('#deliveries').getByRole('table', { name: /^Attempts of msg_/ });
    const rows = attempts.getByRole('row');
    await expect.poll(() => rows.count()).toBe(3);
    expect(await rows.nth(1).textContent()).toContain('500');
    expect(await rows.nth(1).textContent()).toContain('not yet');
    expect(await rows.nth(2).textContent()).toContain('200');
    for (const [i, received] of w.receiver.received.entries()) {
      await rows.nth(i + 1).getByText('5 headers').click();
      const headers = Object.fromEntries(
        ((await rows.nth(i + 1).locator('pre').textContent()) ?? '').split('\n').map((line) => line.split(/: (.*)/s).slice(0, 2)),
      );
      for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature', 'content-type', 'user-agent']) {
        const shown = Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1];
        expect(shown, name).toBe(received.headers[name]);
      }
    }

    // Another task, failed from the page with a chosen code: the ledger shows its refund.
    const second = await w.submit('n2', 'default');
    await page.getByRole('link', { name: 'All tasks' }).click();
    const secondRow = tasks.getByRole('row').filter({ hasText: second });
    await secondRow.getByText('queued', { exact: true }).waitFor();
    await secondRow.getByRole('button', { name: second }).click();
    await page.getByRole('heading', { name: `Task ${second}` }).waitFor();
    await page.getByLabel('Failure code').selectOption('generation_failed');
    await page.getByRole('button', { name: 'Fail', exact: true }).click();
    await page.getByRole('status').filter({ hasText: `Task ${second} failed with generation_failed` }).waitFor();
    await page.locator('#task-payloads').getByLabel('Error', { exact: true }).waitFor();
    await page.locator('#deliveries').getByRole('table', { name: /^Attempts of msg_/ }).getByRole('cell', { name: '200', exact: true }).waitFor();
    // Back on the list, the task has failed; its account's page shows the refund in the ledger.
    await page.goBack();
    await secondRow.getByText('failed', { exact: true }).waitFor();
    await page.evaluate('window.scrollTo(0, 0)');
    await screenshot(page, 'dashboard.png');
    await page.goto(`${w.base}/_emulator/ui#account=acct_demo`);
    const ledger = page.getByRole('table', { name: /^Ledger of acct_demo/ });
    const refund = ledger.getByRole('row').filter({ hasText: second }).filter({ hasText: 'refund' });
    await refund.waitFor();
    expect(await refund.textContent()).toContain('+40.000');

    // The first task's page, from its heading down, below the sticky header.
    await openView(page, 'Tasks');
    await tasks.getByRole('button', { name: first }).click();
    await page.getByRole('heading', { name: `Task ${first}` }).waitFor();
    // Its message shown again, the body folded as at first.
    await expect.poll(() => page.locator('#deliveries').getByRole('table', { name: /^Attempts of msg_/ }).getByRole('row').count()).toBe(3);
    await page.locator('#deliveries').getByLabel('Body sent on every attempt').waitFor({ state: 'hidden' });
    await page.locator('#deliveries').getByText('5 headers').first().click();
    await page.locator('#deliveries').getByLabel(/^Headers of attempt 1 of msg_/).waitFor();
    await page.setViewportSize({ width: 1280, height: 1300 });
    await toTop(page.getByRole('heading', { name: `Task ${first}` }));
    await screenshot(page, 'dashboard-task.png');
    expect(w.problems).toEqual([]);
  },
  BROWSER_TEST_MS,
);

it.skipIf(!HAS_CHROMIUM)(
  'lists the callback messages of every task, failing and pending first, resends one, and opens one by its link',
  async () => {
    // The first callback is answered 503; every later request 200.
    const w = await openWorld((n, res) => void res.writeHead(n === 0 ? 503 : 200).end(n === 0 ? 'busy' : 'ok'));
    const { page } = w;
    const ids = [];
    for (const note of ['a', 'b', 'c']) {
      ids.push(await w.submit(note));
      await w.advance(0);
    }
    const messages = (await w.admin('/_emulator/webhooks/deliveries')).data as { id: string; task_id: string }[];
    const [failing, middle, newest] = messages.map((m) => m.id) as [string, string, string];

    await signIn(page, w.base, ADMIN_TOKEN);
    await openView(page, 'Callbacks');
    const table = callbacksTable(page);
    const rows = table.getByRole('row');
    await table.getByRole('row').filter({ hasText: failing }).getByText('retrying').waitFor();
    expect(await rows.nth(1).textContent()).toContain(failing);
    expect(await rows.nth(1).textContent()).toContain('503');
    expect(await rows.nth(2).textContent()).toContain(newest);
    expect(await rows.nth(3).textContent()).toContain(middle);

    // Two a page.
    await page.locator('#callback-limit').fill('2');
    await page.locator('#callback-limit').press('Enter');
    await expect.poll(() => rows.count()).toBe(3);
    await page.getByRole('button', { name: 'More messages' }).click();
    await table.getByRole('row').filter({ hasText: middle }).waitFor();
    expect(await rows.count()).toBe(2);
    await page.getByRole('button', { name: 'Previous messages' }).click();
    await table.getByRole('row').filter({ hasText: failing }).waitFor();

    // Resent, the failing message is delivered and goes down the list; the header says what came back.
    await table.getByRole('button', { name: `Resend ${failing}` }).click();
    await page.getByRole('status').filter({ hasText: `Resent ${failing}: answered 200.` }).waitFor();
    await expect.poll(async () => rows.nth(1).textContent()).toContain(newest);
    expect(w.receiver.received).toHaveLength(4);
    await screenshot(page, 'dashboard-callbacks.png');

    // Chosen, a message shows its attempts and the address names it; a link to another opens that one.
    await table.getByRole('button', { name: newest, exact: true }).click();
    await page.getByRole('heading', { name: `Message ${newest}` }).waitFor();
    expect(new URL(page.url()).hash).toBe(`#delivery=${newest}`);
    await page.goto(`${w.base}/_emulator/ui#delivery=${failing}`);
    await page.getByRole('heading', { name: `Message ${failing}` }).waitFor();
    const attempts = page.locator('#delivery-detail').getByRole('table', { name: `Attempts of ${failing}` }).getByRole('row');
    await expect.poll(() => attempts.count()).toBe(3);
    expect(await attempts.nth(1).textContent()).toContain('automatic');
    expect(await attempts.nth(2).textContent()).toContain('resend');
    await page.locator('#delivery-detail').getByText('5 headers').first().click();

    await page.setViewportSize({ width: 1280, height: 1300 });
    await toTop(page.getByRole('heading', { name: 'Callbacks', level: 2 }));
    await screenshot(page, 'dashboard-message.png');
    expect(w.problems).toEqual([]);
  },
  BROWSER_TEST_MS,
);

it.skipIf(!HAS_CHROMIUM)(
  'opens a call record with its prompt and output, copies it as a curl command that runs, and opens items by link',
  async () => {
    const w = await openWorld(undefined, { recordContent: true });
    const { page, context } = w;
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: w.base });
    const chat = await fetch(`${w.base}/v1/chat/completions`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${DEMO_KEY}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ model: 'svc-text-pro', messages: [{ role: 'user', content: 'Explain the tides' }] }),
    });
    const chatId = String(chat.headers.get('x-request-id'));
    const task = await w.submit('n1', 'slow');
    const taskCall = ((await w.admin('/_emulator/records?path=/v1/tasks')).data[0] as { request_id: string }).request_id;

    // A link opens the record once signed in (a browser that never signed in to this emulator asks for the token first).
    await signIn(page, w.base, ADMIN_TOKEN, `#record=${chatId}`);
    await page.getByRole('heading', { name: `Call ${chatId}` }).waitFor();
    const prompt = page.locator('#record-payloads').getByLabel('Prompt', { exact: true });
    expect(JSON.parse((await prompt.textContent()) ?? '')).toEqual(['Explain the tides']);
    expect(await page.locator('#record-payloads').getByLabel('Output', { exact: true }).textContent()).not.toBe('');

    // As curl: the key as $SVC_KEY, the body rebuilt from the prompt; copied, and it runs.
    const curl = (await page.locator('#record-curl').textContent()) ?? '';
    expect(curl).toContain('-H "Authorization: Bearer $SVC_KEY"');
    expect(curl).not.toContain(DEMO_KEY);
    expect(curl).toContain('Explain the tides');
    expect(await page.locator('#curl-note').textContent()).toContain('sk-…demo');
    await page.getByRole('button', { name: 'Copy as curl' }).click();
    await page.getByRole('status').filter({ hasText: `Copied the curl command of ${chatId}.` }).waitFor();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(curl);
    const answer = JSON.parse((await run('sh', ['-c', curl], { env: { ...process.env, SVC_KEY: DEMO_KEY } })).stdout) as Record<string, unknown>;
    expect(answer).toMatchObject({ object: 'chat.completion', model: expect.stringMatching(/^svc-text-pro/) });
    await page.setViewportSize({ width: 1280, height: 1100 });
    await toTop(page.getByRole('heading', { name: `Call ${chatId}` }));
    await screenshot(page, 'dashboard-record.png');
    await page.setViewportSize({ width: 1280, height: 900 });

    // The task's submission, chosen from the table: the address follows, and its curl submits the same task again.
    await page.getByRole('link', { name: 'All call records' }).click();
    const records = recordsTable(page);
    await records.getByRole('button', { name: taskCall }).click();
    await page.getByRole('heading', { name: `Call ${taskCall}` }).waitFor();
    expect(new URL(page.url()).hash).toBe(`#record=${taskCall}`);
    await expect.poll(() => page.locator('#record-curl').textContent()).toContain('X-Emulator-Scenario: slow');
    const again = JSON.parse((await run('sh', ['-c', (await page.locator('#record-curl').textContent()) ?? ''], { env: { ...process.env, SVC_KEY: DEMO_KEY } })).stdout) as {
      id: string;
      input: unknown;
    };
    expect(again.input).toEqual({ mode: 'note', note: 'n1', agree: true });
    expect(((await w.admin(`/_emulator/tasks/${again.id}`)) as { scenario?: string }).scenario).toBe('slow');

    // One record a page: the oldest (the first chat call) on the last.
    await page.getByRole('link', { name: 'All call records' }).click();
    const recordCount = (await w.admin('/_emulator/records?limit=1000')).data.length;
    await page.locator('#record-limit').fill('1');
    await page.locator('#record-limit').press('Enter');
    await expect.poll(() => records.getByRole('row').count()).toBe(2);
    for (let n = 2; n <= recordCount; n += 1) {
      await page.getByRole('button', { name: 'Older records' }).click();
      await page.locator('#records-pager').getByText(`Page ${n}`).waitFor();
    }
    await records.getByRole('row').filter({ hasText: chatId }).waitFor();
    expect(await page.getByRole('button', { name: 'Older records' }).getAttribute('aria-disabled')).toBe('true');

    // Links to a task and an account open them; Back goes to the item before.
    await page.goto(`${w.base}/_emulator/ui#task=${task}`);
    await page.getByRole('heading', { name: `Task ${task}` }).waitFor();
    const other = (await w.post('/_emulator/accounts', { points: '50.000' })) as { id: string };
    await page.goto(`${w.base}/_emulator/ui#account=${other.id}`);
    await page.getByRole('table', { name: `Ledger of ${other.id}: 1 entries, newest first` }).waitFor();
    await page.goBack();
    await expect.poll(() => new URL(page.url()).hash).toBe(`#task=${task}`);

    // One account a page; the demo account's ledger a few entries at a time, older ones on request.
    await openView(page, 'Accounts');
    await page.locator('#account-limit').fill('1');
    await page.locator('#account-limit').press('Enter');
    await page.getByRole('button', { name: 'Next accounts' }).click();
    await page.getByRole('button', { name: `Ledger of ${other.id}` }).waitFor();
    await page.getByRole('button', { name: 'Previous accounts' }).click();
    // The ledger read begun with the old page size answers only after the size has changed: it must not win.
    const countRead = /\/ledger\?(.*&)?limit=0(&|$)/;
    let slowed = 0;
    await page.route(countRead, async (route) => {
      slowed += 1;
      await new Promise((resolve) => setTimeout(resolve, 800));
      await route.continue();
    });
    await page.getByRole('button', { name: 'Ledger of acct_demo' }).click();
    await page.locator('#ledger-limit').fill('2');
    await page.locator('#ledger-limit').press('Enter');
    await expect.poll(() => slowed).toBeGreaterThan(0);
    await page.waitForTimeout(1000);
    // Waits for a slowed read still in flight: it must answer before the test reads on (or leaves the page).
    await page.unrouteAll({ behavior: 'wait' });
    const ledger = page.getByRole('table', { name: /^Ledger of acct_demo/ });
    // fund, the text call's freeze and its settlement, two task freezes: the newest two shown.
    await ledger.getByRole('caption').filter({ hasText: '(the newest 2 shown)' }).waitFor();
    const count = ((await w.admin('/_emulator/accounts/acct_demo/ledger?limit=0')) as { count?: number }).count ?? 0;
    await page.getByRole('button', { name: 'Show older entries' }).click();
    await ledger.getByRole('caption').filter({ hasText: `(the newest 4 shown)` }).waitFor();
    expect(await ledger.getByRole('row').count()).toBe(5);
    expect(await ledger.getByRole('row').nth(4).getByRole('cell').first().textContent()).toBe(String(count - 3));
    expect(w.problems).toEqual([]);
  },
  BROWSER_TEST_MS,
);

it.skipIf(!HAS_CHROMIUM)(
  "debugs a refused call from its record, reproduces it as curl, follows a text call's ledger rows, and shows the webhook secret",
  async () => {
    const w = await openWorld(undefined, { recordContent: true });
    const { page, context } = w;
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: w.base });
    const refused = await fetch(`${w.base}/v1/tasks?limit=5&status=nope`, { headers: { Authorization: `Bearer ${DEMO_KEY}`, 'X-Trace': 'trace-7' } });
    expect(refused.status).toBe(422);
    const refusedBody = (await refused.json()) as { error: { message: string; details: { field: string; message: string }[] } };
    const refusedId = String(refused.headers.get('x-request-id'));
    const slow = await w.submit('n1', 'slow');
    const submitCall = ((await w.admin('/_emulator/records?path=/v1/tasks&status=200')).data[0] as { request_id: string }).request_id;
    const chat = await fetch(`${w.base}/v1/chat/completions`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${DEMO_KEY}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ model: 'svc-text-pro', messages: [{ role: 'user', content: 'Hi' }] }),
    });
    const chatId = String(chat.headers.get('x-request-id'));
    const messages = await fetch(`${w.base}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': DEMO_KEY, 'anthropic-version': '2023-06-01', 'Content-Type': 'application/json' },
      body: JSON.stringify({ model: 'svc-text-pro', max_tokens: 64, messages: [{ role: 'user', content: 'Hello' }] }),
    });
    expect(messages.status).toBe(200);
    const messagesId = String(messages.headers.get('x-request-id'));

    // The refused call: its query string, the error's message and the field it named, its headers with the key masked.
    await signIn(page, w.base, ADMIN_TOKEN, `#record=${refusedId}`);
    await page.getByRole('heading', { name: `Call ${refusedId}` }).waitFor();
    const facts = page.locator('#record-facts');
    const factOf = (name: string) => facts.locator('div').filter({ has: page.locator('dt', { hasText: new RegExp(`^${name}$`) }) }).locator('dd');
    await expect.poll(() => factOf('Call').textContent()).toBe('GET /v1/tasks?limit=5&status=nope');
    expect(await factOf('Error code').textContent()).toBe('invalid_params');
    expect(await factOf('Error message').textContent()).toBe(refusedBody.error.message);
    expect(await page.getByLabel('Fields the error named').textContent()).toBe(`status: ${refusedBody.error.details[0]?.message}`);
    await page.locator('#record-payloads summary').filter({ hasText: 'Request headers' }).click();
    const headers = (await page.locator('#record-payloads').getByLabel('Request headers', { exact: true }).textContent()) ?? '';
    expect(headers).toContain('authorization: [redacted]');
    expect(headers).toContain('x-trace: trace-7');
    expect(headers).not.toContain(DEMO_KEY);
    await page.setViewportSize({ width: 1280, height: 1100 });
    await toTop(page.getByRole('heading', { name: `Call ${refusedId}` }));
    await screenshot(page, 'dashboard-refused.png');
    await page.setViewportSize({ width: 1280, height: 900 });

    // As curl, with its query string: it is refused the same way again.
    const curl = (await page.locator('#record-curl').textContent()) ?? '';
    expect(curl).toContain(`'${w.base}/v1/tasks?limit=5&status=nope'`);
    const again = JSON.parse((await run('sh', ['-c', curl], { env: { ...process.env, SVC_KEY: DEMO_KEY } })).stdout) as typeof refusedBody;
    expect(again.error.details).toEqual(refusedBody.error.details);

    // A Messages call made with x-api-key is made again the same way, its headers with it.
    await page.goto(`${w.base}/_emulator/ui#record=${messagesId}`);
    await page.getByRole('heading', { name: `Call ${messagesId}` }).waitFor();
    await expect.poll(() => page.locator('#record-curl').textContent()).toContain('-H "x-api-key: $SVC_KEY"');
    const messagesCurl = (await page.locator('#record-curl').textContent()) ?? '';
    expect(messagesCurl).toContain("-H 'anthropic-version: 2023-06-01'");
    expect(messagesCurl).not.toContain('Authorization');
    const answered = JSON.parse((await run('sh', ['-c', messagesCurl], { env: { ...process.env, SVC_KEY: DEMO_KEY } })).stdout) as Record<string, unknown>;
    expect(answered).toMatchObject({ type: 'message', role: 'assistant' });

    // A submission shows the scenario it ran under.
    await page.goto(`${w.base}/_emulator/ui#record=${submitCall}`);
    await page.getByRole('heading', { name: `Call ${submitCall}` }).waitFor();
    await expect.poll(() => factOf('Scenario').textContent()).toBe('slow');
    expect(await factOf('Task').textContent()).toBe(slow);

    // The text call's ledger rows, on its account's page, each open its record.
    await page.goto(`${w.base}/_emulator/ui#account=acct_demo`);
    const ledger = page.getByRole('table', { name: /^Ledger of acct_demo/ });
    const ofCall = ledger.getByRole('row').filter({ has: page.getByRole('button', { name: chatId }) });
    await expect.poll(() => ofCall.count()).toBe(3);
    await ofCall.filter({ hasText: 'charge' }).getByRole('button', { name: chatId }).click();
    await page.getByRole('heading', { name: `Call ${chatId}` }).waitFor();
    expect(new URL(page.url()).hash).toBe(`#record=${chatId}`);
    await expect.poll(() => factOf('Call').textContent()).toBe('POST /v1/chat/completions');
    // Nothing chose its answer: the default scenario's generated text.
    expect(await factOf('Scenario').textContent()).toBe('default');
    expect(await factOf('Text answer').textContent()).toBe('generated (no header or match rule chose a scenario)');

    // The chosen account's webhook secret: masked, shown on request, copied whole.
    const account = { webhook_secret: String((await w.admin('/_emulator/accounts/acct_demo'))['webhook_secret']) };
    await page.goto(`${w.base}/_emulator/ui#account=acct_demo`);
    await page.getByRole('heading', { name: 'Account acct_demo' }).waitFor();
    const secret = page.getByLabel('Webhook secret of acct_demo');
    await expect.poll(() => secret.textContent()).toBe(`${account.webhook_secret.slice(0, 6)}…${account.webhook_secret.slice(-4)}`);
    await page.getByRole('button', { name: 'Show secret' }).click();
    await expect.poll(() => secret.textContent()).toBe(account.webhook_secret);
    expect(await page.getByRole('button', { name: 'Show secret' }).getAttribute('aria-pressed')).toBe('true');
    await page.getByRole('button', { name: 'Copy secret' }).click();
    await page.getByRole('status').filter({ hasText: 'Copied the webhook secret of acct_demo.' }).waitFor();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(account.webhook_secret);
    await page.getByRole('button', { name: 'Show secret' }).click();
    await expect.poll(() => secret.textContent()).not.toBe(account.webhook_secret);
    expect(w.problems).toEqual([]);
  },
  BROWSER_TEST_MS,
);

describe('the Faults panel', () => faultsPanelTests(browser, screenshot));
describe('the Scenarios panel', () => scenariosPanelTests(browser));
describe('the Verdict panel', () => verdictPanelTests(browser));
describe('uploaded files opened in the dashboard’s tab', () => servedFilesTests(browser));
describe('the world picker and overview', () => sessionsPickerTests(browser));
describe('the overview’s counts and search box', () => overviewPanelTests(browser, screenshot));
describe('truthful labels', () => labelsTests(browser, screenshot));
describe('a page per thing, at its own address', () => addressesTests(browser, screenshot));
