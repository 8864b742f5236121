import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import type { Emulator } from '../../src/index.ts';
import { ADMIN_TOKEN, startEmulator } from '../support/harness.ts';
import { HAS_CHROMIUM, itServesPanelScript, openView, signedInPage } from '../support/browser-chromium.ts';
import type { FileBrowser } from '../support/browser-chromium.ts';

// The dashboard's Scenarios panel, driven in chromium: a scenario file pasted as YAML is loaded through
// POST /_emulator/scenarios and listed at once; text that is not YAML, or a scenario the API refuses, is refused
// with the API's own words and loads nothing. Its tests run in test/ui/dashboard.test.ts, on that file's chromium.

/** Registers the Scenarios panel's tests, on the chromium of the file that calls it (test/ui/dashboard.test.ts). */
export function scenariosPanelTests(browser: FileBrowser): void {
  let emulator: Emulator;
  let base: string;
  beforeAll(async () => {
    ({ emulator } = await startEmulator());
    base = await emulator.listen(0);
  });
  afterAll(async () => {
    await emulator.close();
  });

  itServesPanelScript(() => emulator.app, 'scenarios.js', 'startScenarioForm');

  const names = async (): Promise<string[]> =>
    ((await (await fetch(`${base}/_emulator/scenarios`, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } })).json()) as { data: { name: string }[] }).data.map((s) => s.name);
  /** The API's own refusal of `text` sent as YAML, to compare with what the page says. */
  const refusalOf = async (text: string): Promise<string> => {
    const res = await fetch(`${base}/_emulator/scenarios`, { method: 'POST', headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/yaml' }, body: text });
    const { error } = (await res.json()) as { error: { code: string; message: string } };
    return `Refused: ${res.status} ${error.code}: ${error.message}`;
  };
  const open = async (): Promise<{ page: Page; problems: string[] }> => {
    const opened = await signedInPage(browser, base, ADMIN_TOKEN);
    // Whether the sections are one page or views of their own, the section's link in the nav brings it up.
    await openView(opened.page, 'Scenarios');
    return opened;
  };

  it.skipIf(!HAS_CHROMIUM)(
    'loads a scenario file pasted as YAML, lists it at once, and refuses bad YAML or a bad scenario with the API’s error',
    async () => {
      const { page, problems } = await open();
      const panel = page.locator('section', { has: page.getByRole('heading', { name: 'Scenarios', level: 2 }) });
      const table = page.getByRole('table', { name: 'Scenarios in force (loaded ones first)' });
      const box = panel.getByLabel('Scenario file (YAML or JSON)');
      const load = panel.getByRole('button', { name: 'Load scenario' });
      await table.getByRole('rowheader', { name: 'default' }).waitFor();
      const before = await names();

      // Not YAML: the parser's complaint, as the API gives it; nothing loaded.
      const broken = 'scenarios: [\n  - name: half-written';
      await box.fill(broken);
      await load.click();
      const notYaml = await refusalOf(broken);
      expect(notYaml).toMatch(/^Refused: 400 bad_request: The request body is not valid YAML: /);
      await page.getByRole('status').filter({ hasText: notYaml }).waitFor();

      // YAML, but a scenario the schema refuses: the 422 names the field.
      const wrong = 'scenarios:\n  - name: pasted-wrong\n    outcome: maybe\n';
      await box.fill(wrong);
      await load.click();
      const invalid = await refusalOf(wrong);
      expect(invalid).toMatch(/^Refused: 422 invalid_params: .*scenarios\[0\]\.outcome/);
      await page.getByRole('status').filter({ hasText: invalid }).waitFor();
      expect(await names()).toEqual(before);
      expect(await table.getByRole('rowheader', { name: 'pasted-wrong' }).count()).toBe(0);

      // A scenario file as one would write it, comments and flow mappings included: loaded, and listed first.
      await box.fill(
        [
          '# pasted from the dashboard',
          'scenarios:',
          '  - name: pasted-slow',
          '    description: Waits a minute in the queue, then fails.',
          '    queue_seconds: 60',
          '    outcome: failed',
          '    failure: { code: generation_failed }',
          '',
        ].join('\n'),
      );
      await load.click();
      await page.getByRole('status').filter({ hasText: 'Scenario pasted-slow loaded.' }).waitFor();
      const row = table.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'pasted-slow' }) });
      await row.getByText('Waits a minute in the queue, then fails.').waitFor();
      expect(await row.textContent()).toContain('failed (generation_failed)');
      expect((await names())[0]).toBe('pasted-slow');
      expect(emulator.control.scenarios.list().data.find((s) => s.name === 'pasted-slow')).toMatchObject({
        queue_seconds: 60,
        outcome: 'failed',
        failure: { code: 'generation_failed' },
      });
      expect(problems).toEqual([
        'Failed to load resource: the server responded with a status of 400 (Bad Request)',
        'Failed to load resource: the server responded with a status of 422 (Unprocessable Entity)',
      ]);
    },
    60_000,
  );
}
