import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { afterEach, expect, it } from 'vitest';
import { createEmulator } from '../../src/index.ts';
import type { Emulator } from '../../src/index.ts';
import { ScenarioFileError } from '../../src/scenarios/index.ts';
import { startEmulator } from '../support/harness.ts';
import type { TestEmulator } from '../support/harness.ts';

const SHIPPED = fileURLToPath(new URL('../../scenarios/', import.meta.url));

const MINIMAL_DEFAULT = ['scenarios:', '  - name: default', '    outcome: succeeded', ''].join('\n');

const shippedFiles = (await readdir(SHIPPED)).filter((name) => /\.(ya?ml|json)$/.test(name)).sort();
/** Every built-in scenario, in file order. */
const shippedNames: string[] = [];
for (const name of shippedFiles) {
  const document = parse(await readFile(join(SHIPPED, name), 'utf8')) as { scenarios: { name: string }[] };
  shippedNames.push(...document.scenarios.map((s) => s.name));
}

const names = async (t: TestEmulator): Promise<string[]> =>
  ((await t.admin.get('/_emulator/scenarios')).body.data as { name: string }[]).map((s) => s.name);

const tempDirs: string[] = [];
const started: Emulator[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((e) => e.close()));
  await Promise.all(tempDirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

/** A scenario folder with the given files, removed after the test. */
async function folder(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-scenario-files-'));
  tempDirs.push(dir);
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
  return dir;
}

const start = async (scenariosDir?: string): Promise<Emulator> => {
  const emulator = await createEmulator({
    clock: 'manual',
    log: () => undefined,
    ...(scenariosDir === undefined ? {} : { scenariosDir }),
  });
  started.push(emulator);
  return emulator;
};

/** The error a start fails with; fails the test if the start succeeds. */
async function startFailure(scenariosDir: string): Promise<Error> {
  const error = await start(scenariosDir).then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(error, 'the start should have been refused').toBeInstanceOf(ScenarioFileError);
  return error as Error;
}

it.each([
  [
    'a negative queue_seconds',
    [
      'scenarios:',
      '  - name: default',
      '    outcome: succeeded',
      '  - name: slowpoke',
      '    queue_seconds: -1',
      '    outcome: succeeded',
    ].join('\n'),
    'scenarios[1].queue_seconds',
  ],
  [
    'an unknown outcome',
    ['scenarios:', '  - name: default', '    outcome: exploded'].join('\n'),
    'scenarios[0].outcome',
  ],
  [
    'outcome failed without failure',
    ['scenarios:', '  - name: default', '    outcome: failed'].join('\n'),
    'scenarios[0].failure',
  ],
  [
    'a name used twice in the file',
    ['scenarios:', '  - name: default', '    outcome: succeeded', '  - name: default', '    outcome: timeout'].join('\n'),
    'scenarios[1].name',
  ],
  [
    'an unknown property',
    ['scenarios:', '  - name: default', '    outcome: succeeded', '    queue_secs: 3'].join('\n'),
    'scenarios[0].queue_secs',
  ],
  ['no scenarios key (a bare scenario)', ['name: default', 'outcome: succeeded'].join('\n'), 'scenarios'],
  ['a scenarios key of the wrong name', ['scenario:', '  - name: default', '    outcome: succeeded'].join('\n'), 'scenarios'],
])('refuses to start with a scenario file with %s, naming the file and the field', async (_name, text, field) => {
  const dir = await folder({ 'bad.yaml': text });
  const error = await startFailure(dir);
  expect(error.message).toContain(join(dir, 'bad.yaml'));
  expect(error.message).toContain(field);
});

it.each([
  ['a bare list of scenarios', ['- name: default', '  outcome: succeeded'].join('\n')],
  ['nothing in it', ''],
])('refuses to start with a file with %s at the top, naming the file', async (_name, text) => {
  const dir = await folder({ 'a-default.yaml': MINIMAL_DEFAULT, 'odd.yaml': text });
  const error = await startFailure(dir);
  expect(error.message).toContain(join(dir, 'odd.yaml'));
});

it('refuses to start with a file that is not YAML, naming the file and where it breaks', async () => {
  const dir = await folder({
    'a-default.yaml': MINIMAL_DEFAULT,
    'broken.yaml': ['scenarios:', '  - name: broken', '    outcome: [succeeded', ''].join('\n'),
  });
  const error = await startFailure(dir);
  expect(error.message).toContain(join(dir, 'broken.yaml'));
  expect(error.message).not.toContain('a-default.yaml');
  expect(error.message).toMatch(/at line \d+, column \d+/);
});

it('refuses to start when two files define the same name, naming the later file, the field and the name', async () => {
  const dir = await folder({
    '1-first.yaml': [
      'scenarios:',
      '  - name: default',
      '    outcome: succeeded',
      '  - name: flaky',
      '    outcome: succeeded',
    ].join('\n'),
    '2-second.yaml': [
      'scenarios:',
      '  - name: other',
      '    outcome: succeeded',
      '  - name: flaky',
      '    outcome: timeout',
    ].join('\n'),
  });
  const error = await startFailure(dir);
  expect(error.message).toContain(join(dir, '2-second.yaml'));
  expect(error.message).toContain("'flaky'");
  expect(error.message).toContain('scenarios[1].name');
});

it('starts without a default of its own: the built-in default stays in force', async () => {
  const dir = await folder({
    'one.yaml': ['scenarios:', '  - name: fast', '    queue_seconds: 0', '    outcome: succeeded'].join('\n'),
    'two.yaml': ['scenarios:', '  - name: fails', '    outcome: failed', '    failure: { code: no_result }'].join('\n'),
  });
  const t = await startEmulator({ scenariosDir: dir });
  try {
    expect(await names(t)).toEqual(['fast', 'fails', ...shippedNames]);
  } finally {
    await t.close();
  }
});

it('starts with an empty folder on the built-in scenarios alone', async () => {
  const dir = await folder({});
  const t = await startEmulator({ scenariosDir: dir });
  try {
    expect(await names(t)).toEqual(shippedNames);
  } finally {
    await t.close();
  }
});

it('lets a scenario with a built-in name replace the built-in one, its defaults filled in, and says so', async () => {
  const dir = await folder({ 'default.yaml': MINIMAL_DEFAULT });
  const said: string[] = [];
  const t = await startEmulator({ scenariosDir: dir, log: (line) => said.push(line) });
  try {
    const res = await t.admin.get('/_emulator/scenarios');
    expect(res.status).toBe(200);
    expect(res.body.data[0]).toEqual({ name: 'default', outcome: 'succeeded', queue_seconds: 2, processing_seconds: 10, cancelable_while_processing: false });
    expect((res.body.data as { name: string }[]).map((s) => s.name)).toEqual(['default', ...shippedNames.filter((n) => n !== 'default')]);
    expect(said).toEqual([`scenario 'default' from ${join(dir, 'default.yaml')} replaces the built-in one`]);
  } finally {
    await t.close();
  }
});

it('reads .yaml, .yml and .json files in name order, ahead of the built-in ones, and ignores other files', async () => {
  const dir = await folder({
    'c.json': JSON.stringify({ scenarios: [{ name: 'from-json', outcome: 'succeeded' }] }),
    'a.yaml': ['scenarios:', '  - name: from-yaml', '    outcome: succeeded'].join('\n'),
    'b.yml': ['scenarios:', '  - name: from-yml', '    outcome: timeout'].join('\n'),
    'README.md': 'scenarios: [ this is not : a scenario file',
    'notes.txt': '{',
  });
  const t = await startEmulator({ scenariosDir: dir });
  try {
    expect(await names(t)).toEqual(['from-yaml', 'from-yml', 'from-json', ...shippedNames]);
  } finally {
    await t.close();
  }
});

it('takes a single file as well as a folder, whatever its name ends with', async () => {
  const dir = await folder({
    'mine.conf': ['scenarios:', '  - name: mine', '    outcome: succeeded'].join('\n'),
    'other.yaml': ['scenarios:', '  - name: other', '    outcome: succeeded'].join('\n'),
  });
  const t = await startEmulator({ scenariosDir: join(dir, 'mine.conf') });
  try {
    expect(await names(t)).toEqual(['mine', ...shippedNames]);
  } finally {
    await t.close();
  }
});

it.each([
  ['folder', 'no-such-folder'],
  ['file', 'no-such-file.yaml'],
])('refuses to start with a %s that does not exist, naming it', async (_kind, name) => {
  const dir = await folder({});
  const error = await startFailure(join(dir, name));
  expect(error.message).toBe(`${join(dir, name)}: no such file or folder`);
});

it("adds nothing and replaces nothing when given the package's own folder", async () => {
  const said: string[] = [];
  const t = await startEmulator({ scenariosDir: SHIPPED, log: (line) => said.push(line) });
  try {
    expect(await names(t)).toEqual(shippedNames);
    expect(said).toEqual([]);
  } finally {
    await t.close();
  }
});

it('ships scenario files', () => {
  expect(shippedFiles).toEqual(expect.arrayContaining(['default.yaml', 'failures.yaml', 'lifecycle.yaml']));
});

it('starts from the shipped folder by default and lists every scenario of its files, in file order', async () => {
  expect(shippedNames).toContain('default');
  const t = await startEmulator();
  try {
    const res = await t.admin.get('/_emulator/scenarios');
    expect(res.status).toBe(200);
    expect((res.body.data as { name: string }[]).map((s) => s.name)).toEqual(shippedNames);
  } finally {
    await t.close();
  }
});
