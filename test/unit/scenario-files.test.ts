import { copyFile, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { afterEach, expect, it } from 'vitest';
import { createEmulator } from '../../src/index.ts';
import type { Emulator } from '../../src/index.ts';
import { ScenarioFileError } from '../../src/scenarios/index.ts';
import { startEmulator } from '../support/harness.ts';

const SHIPPED = fileURLToPath(new URL('../../scenarios/', import.meta.url));

const MINIMAL_DEFAULT = ['scenarios:', '  - name: default', '    outcome: succeeded', ''].join('\n');

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

it('refuses to start when no file defines a default scenario', async () => {
  const dir = await folder({
    'one.yaml': ['scenarios:', '  - name: fast', '    queue_seconds: 0', '    outcome: succeeded'].join('\n'),
    'two.yaml': ['scenarios:', '  - name: fails', '    outcome: failed', '    failure: { code: no_result }'].join('\n'),
  });
  const error = await startFailure(dir);
  expect(error.message).toContain(dir);
  expect(error.message).toContain("'default'");
});

it('refuses to start with an empty folder, for want of a default scenario', async () => {
  const dir = await folder({});
  const error = await startFailure(dir);
  expect(error.message).toContain("'default'");
});

it('starts with a folder holding only a minimal default, its defaults filled in', async () => {
  const dir = await folder({ 'default.yaml': MINIMAL_DEFAULT });
  await expect(start(dir)).resolves.toBeDefined();
  const t = await startEmulator({ scenariosDir: dir });
  try {
    const res = await t.admin.get('/_emulator/scenarios');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      object: 'list',
      data: [
        {
          name: 'default',
          outcome: 'succeeded',
          queue_seconds: 2,
          processing_seconds: 10,
          cancelable_while_processing: false,
        },
      ],
    });
  } finally {
    await t.close();
  }
});

it('reads .yaml, .yml and .json files in name order and ignores other files', async () => {
  const dir = await folder({
    'c.json': JSON.stringify({ scenarios: [{ name: 'from-json', outcome: 'succeeded' }] }),
    'a.yaml': MINIMAL_DEFAULT,
    'b.yml': ['scenarios:', '  - name: from-yml', '    outcome: timeout'].join('\n'),
    'README.md': 'scenarios: [ this is not : a scenario file',
    'notes.txt': '{',
  });
  const t = await startEmulator({ scenariosDir: dir });
  try {
    const names = ((await t.admin.get('/_emulator/scenarios')).body.data as { name: string }[]).map((s) => s.name);
    expect(names).toEqual(['default', 'from-yml', 'from-json']);
  } finally {
    await t.close();
  }
});

const shippedFiles = (await readdir(SHIPPED)).filter((name) => /\.(ya?ml|json)$/.test(name)).sort();

it('ships scenario files', () => {
  expect(shippedFiles).toEqual(expect.arrayContaining(['default.yaml', 'failures.yaml', 'lifecycle.yaml']));
});

it.each(shippedFiles)('loads the shipped scenario file %s on its own (beside a minimal default)', async (name) => {
  const dir = await folder(name === 'default.yaml' ? {} : { '0-default.yaml': MINIMAL_DEFAULT });
  await copyFile(join(SHIPPED, name), join(dir, name));
  await expect(start(dir)).resolves.toBeDefined();
});

it('starts from the shipped folder by default and lists every scenario of its files, in file order', async () => {
  await expect(start()).resolves.toBeDefined();
  const expected: string[] = [];
  for (const name of shippedFiles) {
    const document = parse(await readFile(join(SHIPPED, name), 'utf8')) as { scenarios: { name: string }[] };
    expected.push(...document.scenarios.map((s) => s.name));
  }
  expect(expected).toContain('default');
  const t = await startEmulator();
  try {
    const res = await t.admin.get('/_emulator/scenarios');
    expect(res.status).toBe(200);
    expect((res.body.data as { name: string }[]).map((s) => s.name)).toEqual(expected);
  } finally {
    await t.close();
  }
});
