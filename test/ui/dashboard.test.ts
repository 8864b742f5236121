import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import request from 'supertest';
import { afterEach, expect, it } from 'vitest';
import { createEmulator } from '../../src/index.ts';
import { ADMIN_TOKEN, DEMO_KEY, START, newAccount, socialNote, startEmulator } from '../support/harness.ts';
import { startReceiver } from '../support/receiver.ts';

// The dashboard at /_emulator/ui, and the two control calls it needs (the account list and cancel). The
// browser test drives Debian's chromium through playwright-core; without /usr/bin/chromium it is skipped, so the
// suite still runs on a developer's machine (CI installs chromium in .ci/run).

const CHROMIUM = '/usr/bin/chromium';
const HAS_CHROMIUM = existsSync(CHROMIUM);
if (!HAS_CHROMIUM) {
  console.warn(`test/ui/dashboard.test.ts: skipping the browser test: ${CHROMIUM} is missing (apt-get install chromium).`);
}
const SCREENSHOT = fileURLToPath(new URL('../../test-results/dashboard.png', import.meta.url));

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function testEmulator() {
  const t = await startEmulator();
  cleanups.push(() => t.close());
  return t;
}

it('serves the dashboard page, its script and its style without a token', async () => {
  const t = await testEmulator();
  for (const [path, type] of [
    ['/_emulator/ui', 'text/html'],
    ['/_emulator/ui/', 'text/html'],
    ['/_emulator/ui/app.js', 'text/javascript'],
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

it.skipIf(!HAS_CHROMIUM)(
  'shows a task submitted through the API, advances the clock from the page, lists its callback, and fails another with a refund',
  async () => {
    const receiver = await startReceiver();
    cleanups.push(() => receiver.close());
    const emulator = await createEmulator({
      clock: 'manual',
      startTime: START,
      adminToken: ADMIN_TOKEN,
      allowInsecureWebhooks: true,
      log: () => undefined,
    });
    cleanups.push(() => emulator.close());
    const base = await emulator.listen(0);
    const call = async (path: string, token: string, body: unknown): Promise<Record<string, unknown>> => {
      const res = await fetch(`${base}${path}`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(res.status, path).toBe(200);
      return (await res.json()) as Record<string, unknown>;
    };
    await call('/_emulator/accounts/acct_demo/webhook', ADMIN_TOKEN, { url: receiver.url });
    const submit = async (): Promise<string> =>
      String((await call('/v1/tasks', DEMO_KEY, { model: 'social-notes-data', input: { mode: 'note', note: 'n1', agree: true } }))['id']);

    const userDataDir = await mkdtemp(join(tmpdir(), 'svc-ui-chromium-'));
    cleanups.push(() => rm(userDataDir, { recursive: true, force: true }));
    const context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
      viewport: { width: 1280, height: 900 },
    });
    cleanups.push(() => context.close());
    context.setDefaultTimeout(10_000);
    const page = context.pages()[0] ?? (await context.newPage());
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(String(error)));
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });

    // Sign in; the token survives a reload of the tab.
    await page.goto(`${base}/_emulator/ui`);
    await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('status').filter({ hasText: 'Signed in.' }).waitFor();
    await page.reload();
    await page.getByRole('heading', { name: 'Clock', level: 2 }).waitFor();
    expect(await page.locator('#clock-now').textContent()).toBe('2026-11-23 09:00:00');
    expect(await page.locator('#clock-mode').textContent()).toBe('manual');

    // A task submitted through the API appears; one virtual minute later (from the keyboard) it has succeeded.
    const first = await submit();
    const tasks = page.getByRole('table', { name: /^Tasks, newest first/ });
    const firstRow = tasks.getByRole('row').filter({ hasText: first });
    await firstRow.getByText('queued', { exact: true }).waitFor();
    await page.getByRole('button', { name: 'Advance 1 min' }).press('Enter');
    await page.getByRole('status').filter({ hasText: 'Clock advanced 60 s' }).waitFor();
    await firstRow.getByText('succeeded', { exact: true }).waitFor();
    expect(await page.locator('#clock-now').textContent()).toBe('2026-11-23 09:01:00');

    // Its callback message lists the attempt the receiver answered with 200.
    await firstRow.getByRole('button', { name: first }).click();
    await page.getByRole('heading', { name: `Task ${first}` }).waitFor();
    const attempts = page.getByRole('table', { name: /^Attempts of msg_/ });
    await attempts.getByRole('cell', { name: '200', exact: true }).waitFor();
    expect(await attempts.getByRole('row').nth(1).textContent()).toContain('automatic');
    expect(receiver.received).toHaveLength(1);
    await page.getByRole('list').filter({ hasText: 'Processing from' }).getByText(/^Succeeded/).waitFor();

    // Another task, failed from the page with a chosen code: the ledger shows its refund.
    const second = await submit();
    const secondRow = tasks.getByRole('row').filter({ hasText: second });
    await secondRow.getByText('queued', { exact: true }).waitFor();
    await secondRow.getByRole('button', { name: second }).click();
    await page.getByRole('heading', { name: `Task ${second}` }).waitFor();
    await page.getByLabel('Failure code').selectOption('generation_failed');
    await page.getByRole('button', { name: 'Fail', exact: true }).click();
    await page.getByRole('status').filter({ hasText: `Task ${second} failed with generation_failed` }).waitFor();
    await secondRow.getByText('failed', { exact: true }).waitFor();
    const ledger = page.getByRole('table', { name: /^Ledger of acct_demo/ });
    const refund = ledger.getByRole('row').filter({ hasText: second }).filter({ hasText: 'refund' });
    await refund.waitFor();
    expect(await refund.textContent()).toContain('+40.000');
    await page.getByRole('table', { name: /^Attempts of msg_/ }).getByRole('cell', { name: '200', exact: true }).waitFor();

    await mkdir(join(SCREENSHOT, '..'), { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    expect(problems).toEqual([]);
  },
  60_000,
);
