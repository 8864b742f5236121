import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Locator, Page } from 'playwright-core';
import type { Emulator } from '../../src/index.ts';
import { ADMIN_TOKEN, DEMO_KEY, startEmulator } from '../support/harness.ts';
import { HAS_CHROMIUM, itServesPanelScript, openView, signedInPage } from '../support/browser-chromium.ts';
import type { FileBrowser } from '../support/browser-chromium.ts';

// The dashboard's Faults panel, driven in chromium: the rules in force with their counts, the form that adds every
// kind the control API takes (each kind's own fields, the match fields of requests or of callbacks), the API's
// refusal said as it gave it, removing one, clearing all; and an injected reset in the records. Its tests run in
// test/ui/dashboard.test.ts, on that file's chromium: a launch of its own cost seconds of CPU.

/**
 * Registers the Faults panel's tests, on the chromium of the file that calls it (test/ui/dashboard.test.ts);
 * `screenshot` saves one as that file does (SCREENSHOTS, UPDATE_SCREENSHOTS).
 */
export function faultsPanelTests(browser: FileBrowser, screenshot: (page: Page, name: string) => Promise<void>): void {
  let emulator: Emulator;
  let base: string;
  beforeAll(async () => {
    ({ emulator } = await startEmulator());
    base = await emulator.listen(0);
  });
  afterAll(async () => {
    await emulator.close();
  });

  itServesPanelScript(() => emulator.app, 'faults.js', 'createFaults');
  itServesPanelScript(() => emulator.app, 'fault-form.js', 'startFaultForm');
  const openPage = () => signedInPage(browser, base, ADMIN_TOKEN);

  const listed = (): { id: string; matched: number; hits: number; fault: Record<string, unknown>; times?: number; match?: Record<string, unknown> }[] =>
    emulator.control.faults.list().data as never;
  const models = () => fetch(`${base}/v1/models`, { headers: { Authorization: `Bearer ${DEMO_KEY}` } });

  it.skipIf(!HAS_CHROMIUM)(
    'adds the common faults from the form, shows each rule’s hits, removes one and clears all',
    async () => {
      const { page, problems } = await openPage();
      const panel = page.locator('section', { has: page.getByRole('heading', { name: 'Faults', level: 2 }) });
      const rules = page.getByRole('table', { name: 'Fault rules in force, in the order they are tried' });
      await openView(page, 'Faults');
      await rules.getByText('No fault rules').waitFor();

      // The next 2 service_unavailable errors of /v1/models.
      await panel.getByLabel('Fault', { exact: true }).selectOption('error');
      await panel.getByLabel('Code').selectOption('service_unavailable');
      await panel.getByLabel('Path').fill('/v1/models');
      await panel.getByLabel('Next N requests').fill('2');
      await panel.getByRole('button', { name: 'Add fault rule' }).click();
      await page.getByRole('status').filter({ hasText: 'Fault rule fault_1 added.' }).waitFor();
      expect(listed()).toEqual([{ id: 'fault_1', match: { path: '/v1/models' }, fault: { kind: 'error', code: 'service_unavailable' }, times: 2, matched: 0, hits: 0 }]);
      const first = rules.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'fault_1' }) });
      expect(await first.textContent()).toContain('error service_unavailable');
      expect(await first.textContent()).toContain('first 2');
      await first.getByText('0 of 0').waitFor();
      expect((await models()).status).toBe(503);
      await first.getByText('1 of 1').waitFor();

      // A latency (its milliseconds field shows only for it), then a reset of every task submission.
      await panel.getByLabel('Fault', { exact: true }).selectOption('latency');
      expect(await panel.getByLabel('Code').isHidden()).toBe(true);
      await panel.getByLabel('Latency (ms)').fill('250');
      await panel.getByLabel('Path').fill('/v1/tasks*');
      await panel.getByLabel('Next N requests').fill('');
      await panel.getByRole('button', { name: 'Add fault rule' }).click();
      await page.getByRole('status').filter({ hasText: 'Fault rule fault_2 added.' }).waitFor();
      await panel.getByLabel('Fault', { exact: true }).selectOption('reset');
      await panel.getByLabel('Path').fill('/v1/chat/completions');
      await panel.getByRole('button', { name: 'Add fault rule' }).click();
      await page.getByRole('status').filter({ hasText: 'Fault rule fault_3 added.' }).waitFor();
      expect(listed().map((r) => [r.id, r.fault, r.times ?? null])).toEqual([
        ['fault_1', { kind: 'error', code: 'service_unavailable' }, 2],
        ['fault_2', { kind: 'latency', ms: 250 }, null],
        ['fault_3', { kind: 'reset' }, null],
      ]);
      await rules.getByRole('row').filter({ hasText: '250 ms before the answer' }).waitFor();

      // A reset request shows in the call records as reset, not as the status it never got.
      await expect(fetch(`${base}/v1/chat/completions`, { method: 'POST', headers: { Authorization: `Bearer ${DEMO_KEY}`, 'Content-Type': 'application/json' }, body: '{"model":"svc-text-lite","messages":[{"role":"user","content":"hi"}]}' })).rejects.toThrow();
      await openView(page, 'Call records');
      await page.getByRole('table', { name: /^Call records of \/v1 requests/ }).getByRole('row').filter({ hasText: 'POST /v1/chat/completions' }).getByText('reset', { exact: true }).waitFor();
      await openView(page, 'Faults');

      // Remove one, then clear the rest.
      await rules.getByRole('button', { name: 'Remove fault_2' }).click();
      await page.getByRole('status').filter({ hasText: 'Fault rule fault_2 removed.' }).waitFor();
      expect(listed().map((r) => r.id)).toEqual(['fault_1', 'fault_3']);
      await expect.poll(() => rules.getByRole('button', { name: 'Remove fault_2' }).count()).toBe(0);
      await panel.getByRole('button', { name: 'Clear all fault rules' }).click();
      await page.getByRole('status').filter({ hasText: '2 fault rule(s) removed.' }).waitFor();
      await rules.getByText('No fault rules').waitFor();
      expect(listed()).toEqual([]);
      expect(problems).toEqual([]);
    },
    60_000,
  );

  it.skipIf(!HAS_CHROMIUM)(
    'adds a cut, a trickle and callback faults from the form as posted, says a callback rule takes callbacks, and shows the API’s refusal',
    async () => {
      emulator.control.faults.clear();
      const { page, problems } = await openPage();
      const panel = page.locator('section', { has: page.getByRole('heading', { name: 'Faults', level: 2 }) });
      const rules = page.getByRole('table', { name: 'Fault rules in force, in the order they are tried' });
      const posted: unknown[] = [];
      page.on('request', (req) => {
        if (req.method() === 'POST' && new URL(req.url()).pathname === '/_emulator/faults') posted.push(...(req.postDataJSON() as { rules: unknown[] }).rules);
      });
      await openView(page, 'Faults');
      await rules.getByText('No fault rules').waitFor();
      const kind = panel.getByLabel('Fault', { exact: true });
      const add = async (): Promise<string> => {
        const before = listed().length;
        await panel.getByRole('button', { name: 'Add fault rule' }).click();
        await expect.poll(() => listed().length).toBe(before + 1);
        const id = String(listed().at(-1)?.id);
        await page.getByRole('status').filter({ hasText: `Fault rule ${id} added.` }).waitFor();
        return id;
      };
      const rowOf = (id: string) => rules.getByRole('row').filter({ has: page.getByRole('rowheader', { name: id }) });
      const cellsOf = async (id: string) => (await rowOf(id).getByRole('cell').allTextContents()).slice(0, 3);

      // A cut of the next chat completion's stream after 2 events: only its own field among the kinds' fields.
      await kind.selectOption('cut');
      for (const other of ['Code', 'Latency (ms)', 'Bytes per second', 'Delay (virtual s)']) expect(await panel.getByLabel(other).isHidden(), other).toBe(true);
      await panel.getByRole('group', { name: 'Which requests' }).waitFor();
      await panel.getByLabel('Cut after (events)').fill('2');
      await panel.getByLabel('Path').fill('/v1/chat/completions');
      await panel.getByLabel('Next N requests').fill('1');
      const cut = await add();

      // A trickle of a quarter of the task submissions (a POST of any /v1/tasks path).
      await kind.selectOption('trickle');
      await panel.getByLabel('Bytes per second').fill('50');
      await panel.getByLabel('Method').selectOption('POST');
      await panel.getByLabel('Path').fill('/v1/tasks*');
      await panel.getByLabel('Next N requests').fill('');
      await panel.getByLabel('Chance (%)').fill('25');
      const trickle = await add();

      // A callback fault takes callbacks: the request fields go, the event comes, N counts callbacks.
      await kind.selectOption('delay');
      await panel.getByRole('group', { name: 'Which callbacks' }).waitFor();
      for (const requestOnly of ['Method', 'Path', 'Model', 'API key']) expect(await panel.getByLabel(requestOnly).isHidden(), requestOnly).toBe(true);
      await panel.getByLabel('Delay (virtual s)').fill('30');
      await panel.getByLabel('Event', { exact: true }).selectOption('task.succeeded');
      await panel.getByLabel('Account').fill('acct_demo');
      await panel.getByLabel('Chance (%)').fill('');
      await panel.getByLabel('Next N callbacks').fill('3');
      const delay = await add();
      await kind.selectOption('duplicate');
      await panel.getByLabel('Event', { exact: true }).selectOption('');
      await panel.getByLabel('Account').fill('');
      await panel.getByLabel('Next N callbacks').fill('');
      const duplicate = await add();
      await kind.selectOption('forged_signature');
      await panel.getByLabel('Account').fill('acct_demo');
      const forged = await add();

      // GET /_emulator/faults holds each rule as the form posted it.
      expect(posted).toEqual([
        { match: { path: '/v1/chat/completions' }, fault: { kind: 'cut', after_chunks: 2 }, times: 1 },
        { match: { method: 'POST', path: '/v1/tasks*' }, fault: { kind: 'trickle', bytes_per_second: 50 }, probability: 0.25 },
        { match: { event: 'task.succeeded', account: 'acct_demo' }, fault: { kind: 'delay', seconds: 30 }, times: 3 },
        { match: {}, fault: { kind: 'duplicate' } },
        { match: { account: 'acct_demo' }, fault: { kind: 'forged_signature' } },
      ]);
      const held = ((await (await fetch(`${base}/_emulator/faults`, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } })).json()) as { data: Record<string, unknown>[] }).data;
      expect(held.map(({ id: _id, matched: _m, hits: _h, ...rule }) => rule)).toEqual(posted);

      // The list says what each takes: callbacks for the callback faults, never "every request".
      await expect.poll(() => cellsOf(forged)).toEqual(['callbacks of acct_demo', 'forged callback first', 'always']);
      expect(await cellsOf(cut)).toEqual(['path /v1/chat/completions', 'cut after 2 events', 'first 1']);
      expect(await cellsOf(trickle)).toEqual(['method POST, path /v1/tasks*', 'trickle at 50 bytes/s', '25 %']);
      expect(await cellsOf(delay)).toEqual(['task.succeeded callbacks of acct_demo', 'callback delayed 30 s (virtual)', 'first 3']);
      expect(await cellsOf(duplicate)).toEqual(['every callback', 'callback delivered twice', 'always']);

      // The cut ends the chat stream after 2 events, without its [DONE].
      const stream = await fetch(`${base}/v1/chat/completions`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${DEMO_KEY}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ model: 'svc-text-lite', stream: true, messages: [{ role: 'user', content: 'Tell me a long story' }] }),
      });
      const events = (await textUntilDropped(stream)).split('\n\n').filter((e) => e.startsWith('data:'));
      expect(events).toHaveLength(2);
      await rowOf(cut).getByText('1 of 1').waitFor();

      await kind.selectOption('delay');
      await toTopOf(panel.getByRole('heading', { name: 'Faults', level: 2 }));
      await screenshot(page, 'dashboard-faults.png');

      // A rule the API refuses: its error, as the API words it, and no rule added.
      await kind.selectOption('trickle');
      await panel.getByLabel('Bytes per second').fill('0');
      const refusal = await fetch(`${base}/_emulator/faults`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ rules: [{ match: {}, fault: { kind: 'trickle', bytes_per_second: 0 } }] }),
      });
      expect(refusal.status).toBe(422);
      const { error } = (await refusal.json()) as { error: { code: string; message: string } };
      await panel.getByRole('button', { name: 'Add fault rule' }).click();
      await page.getByRole('status').filter({ hasText: `Refused: 422 ${error.code}: ${error.message}` }).waitFor();
      expect(listed()).toHaveLength(5);
      expect(problems).toEqual(['Failed to load resource: the server responded with a status of 422 (Unprocessable Entity)']);
      emulator.control.faults.clear();
    },
    60_000,
  );
}

/** Scrolls an element to the top of the page, just below the sticky header. */
const toTopOf = (target: Locator): Promise<void> => target.evaluate((el) => el.scrollIntoView({ block: 'start' }));

/** A response's text as far as it came: a cut stream ends as a dropped connection, without its last events. */
async function textUntilDropped(res: Response): Promise<string> {
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let text = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
  } catch {
    // The connection was dropped: what came before it is the answer.
  }
  return text;
}
