import { createEmulator } from 'svc-emulator';
import { runParity } from 'svc-emulator/parity';
import { readRecording } from 'svc-emulator/recording';
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';

// The in-process parity snippet of docs/guides/record-and-replay.md, call for call, as an integrator's vitest
// suite runs it: a committed recording (sample/: made by record-replay.sh, then import-recording) replayed
// against an emulator made in-process with the recording's scenarios.

const here = (path: string): string => new URL(path, import.meta.url).pathname;

it("runs the docs' parity snippet: the sample recording replays at 100 %", async () => {
  // -- the snippet --
  const emulator = await createEmulator({ clock: 'manual', adminToken: 'adm', scenariosDir: 'examples/recording/sample/scenarios' });
  const baseUrl = await emulator.listen(0);
  const report = await runParity({ recording: readRecording('examples/recording/sample/'), baseUrl, apiKey: 'sk-emulator-demo', adminToken: 'adm', scenarios: 'recorded' });
  await emulator.close();
  expect(report.differed).toBe(0);
  // -- end of the snippet --

  expect(report.agreed).toBeGreaterThan(40);
  expect(report.exchanges).toBe(10);
});

it('is the snippet docs/guides/record-and-replay.md shows', () => {
  const readme = readFileSync(here('../../docs/guides/record-and-replay.md'), 'utf8');
  const block = /In a test suite, with a recording[\s\S]*?```ts\n([\s\S]*?)```/.exec(readme)?.[1];
  const test = readFileSync(new URL(import.meta.url), 'utf8');
  const snippet = /-- the snippet --\n([\s\S]*?)\s*\/\/ -- end of the snippet --/.exec(test)?.[1];
  const lines = (text: string | undefined): string[] => (text ?? '').split('\n').map((line) => line.trim()).filter((line) => line !== '' && !line.startsWith('import '));
  expect(lines(snippet).length).toBeGreaterThan(3);
  expect(lines(block)).toEqual(lines(snippet));
});
