import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { newAccount, socialNote, startEmulator } from '../support/harness.ts';
import type { TestEmulator } from '../support/harness.ts';
import { FAILURE_CODES } from '../support/wire-task.ts';

let t: TestEmulator;
const tempDirs: string[] = [];
beforeEach(async () => {
  t = await startEmulator();
});
afterEach(async () => {
  await t.close();
  await Promise.all(tempDirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});


const advance = (seconds: number) => t.admin.post('/_emulator/clock/advance', { seconds });

const balance = async (id = 'acct_demo'): Promise<{ available: string; frozen: string }> =>
  (await t.admin.get(`/_emulator/accounts/${id}`)).body;

const scenarioHeader = (name: string): Record<string, string> => ({ 'X-Emulator-Scenario': name });

/** Loads scenarios through the control API, insisting that it worked. */
async function load(client: TestEmulator, ...scenarios: Record<string, unknown>[]): Promise<void> {
  const res = await client.admin.post('/_emulator/scenarios', { scenarios });
  expect(res.status).toBe(201);
}

/** The scenario the emulator chose for a task, from the control API's task list. */
async function scenarioOf(id: string, client: TestEmulator = t): Promise<string> {
  const all = (await client.admin.get('/_emulator/tasks')).body.data as { scenario: string; task: { id: string } }[];
  const found = all.find((entry) => entry.task.id === id);
  if (!found) throw new Error(`no task ${id} in /_emulator/tasks`);
  return found.scenario;
}

/** What a task has lived through so far, as the client sees it. */
async function lifeOf(id: string, client: TestEmulator = t): Promise<Record<string, unknown>> {
  const task = (await client.api.get(`/v1/tasks/${id}`)).body;
  return {
    status: task.status,
    started_at: task.started_at,
    finished_at: task.finished_at,
    error: task.error === null ? null : task.error.code,
  };
}

const scenarioNames = async (client: TestEmulator = t): Promise<string[]> =>
  ((await client.admin.get('/_emulator/scenarios')).body.data as { name: string }[]).map((s) => s.name);

const notesSearch = (keyword: string, page: number | string): Record<string, unknown> => ({
  model: 'social-notes-data',
  input: { mode: 'search', keyword, page, agree: true },
});

const video = (input: Record<string, unknown> = {}): Record<string, unknown> => ({
  model: 'video-gen-2.0-fast',
  input: { prompt: 'a quiet harbour', ...input },
});

/** A scenario folder on disk with the given files, removed after the test. */
async function scenarioFolder(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-scenarios-'));
  tempDirs.push(dir);
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
  return dir;
}

// --- selection precedence -------------------------------------------------------------------------------------

const PRECEDENCE_SCENARIOS = [
  {
    name: 'by-header',
    queue_seconds: 3,
    processing_seconds: 4,
    outcome: 'failed',
    failure: { code: 'generation_failed', during: 'processing' },
  },
  { name: 'by-metadata', queue_seconds: 5, outcome: 'failed', failure: { code: 'service_unavailable', during: 'queued' } },
  {
    name: 'by-match',
    match: { metadata: { lane: 'express' } },
    queue_seconds: 7,
    processing_seconds: 1,
    outcome: 'failed',
    failure: { code: 'no_result' },
  },
];

it.each([
  [
    'the X-Emulator-Scenario header beats the metadata key and a fitting match rule',
    { lane: 'express', emulator_scenario: 'by-metadata' },
    scenarioHeader('by-header'),
    'by-header',
    {
      status: 'failed',
      started_at: '2026-11-23T09:00:03+08:00',
      finished_at: '2026-11-23T09:00:07+08:00',
      error: 'generation_failed',
    },
  ],
  [
    'the metadata key emulator_scenario beats a fitting match rule',
    { lane: 'express', emulator_scenario: 'by-metadata' },
    {},
    'by-metadata',
    { status: 'failed', started_at: null, finished_at: '2026-11-23T09:00:05+08:00', error: 'service_unavailable' },
  ],
  [
    'a fitting match rule beats default',
    { lane: 'express' },
    {},
    'by-match',
    {
      status: 'failed',
      started_at: '2026-11-23T09:00:07+08:00',
      finished_at: '2026-11-23T09:00:08+08:00',
      error: 'no_result',
    },
  ],
  [
    'default is used when nothing names a scenario and no match rule fits',
    { lane: 'standard' },
    {},
    'default',
    {
      status: 'succeeded',
      started_at: '2026-11-23T09:00:01+08:00',
      finished_at: '2026-11-23T09:00:09+08:00',
      error: null,
    },
  ],
])('%s', async (_name, metadata, headers, chosen, life) => {
  await load(t, ...PRECEDENCE_SCENARIOS);
  const task = await t.api.post('/v1/tasks', { ...socialNote(), metadata }, headers);
  expect(task.status).toBe(200);
  expect(task.body.status).toBe('queued');
  expect(task.body.metadata).toEqual(metadata);
  await advance(20);
  expect(await lifeOf(task.body.id)).toEqual(life);
  expect(await scenarioOf(task.body.id)).toBe(chosen);
});

it('uses a scenario named by the header even when its own match rule does not fit the task', async () => {
  await load(t, ...PRECEDENCE_SCENARIOS);
  const task = await t.api.post('/v1/tasks', video(), scenarioHeader('by-match'));
  await advance(20);
  expect(await lifeOf(task.body.id)).toEqual({
    status: 'failed',
    started_at: '2026-11-23T09:00:07+08:00',
    finished_at: '2026-11-23T09:00:08+08:00',
    error: 'no_result',
  });
});

// --- match rules ----------------------------------------------------------------------------------------------

it('matches on models: only tasks of a listed model get the scenario', async () => {
  await load(t, { name: 'video-late', match: { models: ['video-gen-2.0-fast'] }, queue_seconds: 40, outcome: 'succeeded' });
  const clip = await t.api.post('/v1/tasks', video());
  const note = await t.api.post('/v1/tasks', socialNote());
  expect(await scenarioOf(clip.body.id)).toBe('video-late');
  expect(await scenarioOf(note.body.id)).toBe('default');
  await advance(39);
  expect((await lifeOf(clip.body.id)).status).toBe('queued');
  await advance(1);
  expect(await lifeOf(clip.body.id)).toMatchObject({ status: 'processing', started_at: '2026-11-23T09:00:40+08:00' });
});

it('matches on accounts: only tasks of a listed account get the scenario', async () => {
  const vip = await newAccount(t);
  await load(t, {
    name: 'vip-fails',
    match: { accounts: [vip.id] },
    queue_seconds: 1,
    outcome: 'failed',
    failure: { code: 'capacity_shortage', during: 'queued' },
  });
  const theirs = await t.as(vip.key).post('/v1/tasks', socialNote());
  const ours = await t.api.post('/v1/tasks', socialNote());
  expect(await scenarioOf(theirs.body.id)).toBe('vip-fails');
  expect(await scenarioOf(ours.body.id)).toBe('default');
  await advance(20);
  expect(await lifeOf(theirs.body.id, { ...t, api: t.as(vip.key) })).toEqual({
    status: 'failed',
    started_at: null,
    finished_at: '2026-11-23T09:00:01+08:00',
    error: 'capacity_shortage',
  });
  expect((await lifeOf(ours.body.id)).status).toBe('succeeded');
  expect(await balance(vip.id)).toMatchObject({ available: '100000.000', frozen: '0.000' });
});

it.each([
  ['the same keyword and page (page sent as a string, compared after normalization)', notesSearch('coffee', '3'), 'coffee-p3'],
  ['another page', notesSearch('coffee', 2), 'default'],
  ['a keyword that only contains the wanted one (equality, not substring)', notesSearch('coffee beans', 3), 'default'],
  ['mode note, which has no keyword', socialNote(), 'default'],
])('matches input fields by equality: %s', async (_name, body, chosen) => {
  await load(t, { name: 'coffee-p3', match: { input: { mode: 'search', keyword: 'coffee', page: 3 } }, outcome: 'succeeded' });
  const task = await t.api.post('/v1/tasks', body);
  expect(task.status).toBe(200);
  expect(await scenarioOf(task.body.id)).toBe(chosen);
});

it.each([
  ['the text in the middle', 'a volcano at dawn', 422],
  ['the text as the whole value', 'volcano', 422],
  ['no such text', 'a calm lake at dawn', 200],
])('matches an input field by {contains: ...}: %s', async (_name, prompt, status) => {
  await load(t, {
    name: 'no-volcanoes',
    match: { input: { prompt: { contains: 'volcano' } } },
    outcome: 'rejected',
    rejection_message: 'Volcanoes are not allowed.',
  });
  const res = await t.api.post('/v1/tasks', video({ prompt }));
  expect(res.status).toBe(status);
  if (status === 422) {
    expect(res.body.error).toMatchObject({ code: 'content_rejected', message: 'Volcanoes are not allowed.' });
  } else {
    expect(await scenarioOf(res.body.id)).toBe('default');
  }
});

it('does not match {contains: ...} on a task whose input lacks the field', async () => {
  await load(t, { name: 'no-volcanoes', match: { input: { prompt: { contains: 'volcano' } } }, outcome: 'rejected' });
  const res = await t.api.post('/v1/tasks', { ...socialNote(), metadata: { note: 'volcano' } });
  expect(res.status).toBe(200);
  expect(await scenarioOf(res.body.id)).toBe('default');
});

it.each([
  ['the wanted value', { tier: 'gold' }, 'gold'],
  ['the wanted value among other keys', { order: '7', tier: 'gold' }, 'gold'],
  ['another value', { tier: 'silver' }, 'default'],
  ['no such key', { order: '7' }, 'default'],
  ['no metadata at all', undefined, 'default'],
])('matches metadata: %s', async (_name, metadata, chosen) => {
  await load(t, { name: 'gold', match: { metadata: { tier: 'gold' } }, outcome: 'succeeded' });
  const task = await t.api.post('/v1/tasks', metadata === undefined ? socialNote() : { ...socialNote(), metadata });
  expect(await scenarioOf(task.body.id)).toBe(chosen);
});

it.each([
  ['all conditions hold', video({ resolution: '1080p' }), { tier: 'gold' }, 'gold-hd-video'],
  ['the input does not fit', video({ resolution: '720p' }), { tier: 'gold' }, 'default'],
  ['the metadata does not fit', video({ resolution: '1080p' }), { tier: 'silver' }, 'default'],
  ['the model does not fit', socialNote(), { tier: 'gold' }, 'default'],
])('needs every condition of a match rule to hold: %s', async (_name, body, metadata, chosen) => {
  await load(t, {
    name: 'gold-hd-video',
    match: { models: ['video-gen-2.0-fast'], input: { resolution: '1080p' }, metadata: { tier: 'gold' } },
    outcome: 'succeeded',
  });
  const task = await t.api.post('/v1/tasks', { ...body, metadata });
  expect(task.status).toBe(200);
  expect(await scenarioOf(task.body.id)).toBe(chosen);
});

it('lets the first matching file scenario win: files in name order, scenarios in file order', async () => {
  const scenariosDir = await scenarioFolder({
    '10-notes.yaml': [
      'scenarios:',
      '  - name: notes-first',
      '    match: { models: [social-notes-data] }',
      '    queue_seconds: 11',
      '    outcome: succeeded',
    ].join('\n'),
    '20-rest.yaml': [
      'scenarios:',
      '  - name: default',
      '    outcome: succeeded',
      '  - name: notes-second',
      '    match: { models: [social-notes-data] }',
      '    outcome: succeeded',
      '  - name: video-a',
      '    match: { models: [video-gen-2.0-fast] }',
      '    queue_seconds: 21',
      '    outcome: succeeded',
      '  - name: video-b',
      '    match: { models: [video-gen-2.0-fast] }',
      '    outcome: succeeded',
    ].join('\n'),
  });
  const own = await startEmulator({ scenariosDir });
  try {
    // The shipped scenarios follow the folder's (a folder's `default` replaces the shipped one).
    expect((await scenarioNames(own)).slice(0, 5)).toEqual(['notes-first', 'default', 'notes-second', 'video-a', 'video-b']);
    const note = await own.api.post('/v1/tasks', socialNote());
    const clip = await own.api.post('/v1/tasks', video());
    expect(await scenarioOf(note.body.id, own)).toBe('notes-first');
    expect(await scenarioOf(clip.body.id, own)).toBe('video-a');
    await own.admin.post('/_emulator/clock/advance', { seconds: 21 });
    expect(await lifeOf(note.body.id, own)).toMatchObject({ started_at: '2026-11-23T09:00:11+08:00' });
    expect(await lifeOf(clip.body.id, own)).toMatchObject({ started_at: '2026-11-23T09:00:21+08:00' });
  } finally {
    await own.close();
  }
});

it('puts run-time loaded scenarios ahead of file scenarios, so their match rules are tried first', async () => {
  const scenariosDir = await scenarioFolder({
    'all.yaml': [
      'scenarios:',
      '  - name: default',
      '    outcome: succeeded',
      '  - name: file-notes',
      '    match: { models: [social-notes-data] }',
      '    outcome: succeeded',
    ].join('\n'),
  });
  const own = await startEmulator({ scenariosDir });
  try {
    const before = await own.api.post('/v1/tasks', socialNote());
    expect(await scenarioOf(before.body.id, own)).toBe('file-notes');
    await load(own, { name: 'runtime-notes', match: { models: ['social-notes-data'] }, queue_seconds: 9, outcome: 'succeeded' });
    expect((await scenarioNames(own)).slice(0, 3)).toEqual(['runtime-notes', 'default', 'file-notes']);
    const after = await own.api.post('/v1/tasks', socialNote());
    expect(await scenarioOf(after.body.id, own)).toBe('runtime-notes');
    // A task keeps the scenario it was accepted under.
    expect(await scenarioOf(before.body.id, own)).toBe('file-notes');
  } finally {
    await own.close();
  }
});

it('puts a later load ahead of an earlier one', async () => {
  await load(t, { name: 'older', match: { models: ['social-notes-data'] }, outcome: 'succeeded' });
  await load(t, { name: 'newer', match: { models: ['social-notes-data'] }, outcome: 'succeeded' });
  expect((await scenarioNames()).slice(0, 3)).toEqual(['newer', 'older', 'default']);
  const task = await t.api.post('/v1/tasks', socialNote());
  expect(await scenarioOf(task.body.id)).toBe('newer');
});

it('lets the first matching scenario of one loaded list win, keeping the list order', async () => {
  await load(
    t,
    { name: 'first', match: { models: ['social-notes-data'] }, queue_seconds: 3, outcome: 'succeeded' },
    { name: 'second', match: { models: ['social-notes-data'] }, queue_seconds: 6, outcome: 'succeeded' },
  );
  const task = await t.api.post('/v1/tasks', socialNote());
  await advance(3);
  expect.soft(await lifeOf(task.body.id)).toMatchObject({ status: 'processing', started_at: '2026-11-23T09:00:03+08:00' });
  expect.soft(await scenarioOf(task.body.id)).toBe('first');
  expect((await scenarioNames()).slice(0, 3)).toEqual(['first', 'second', 'default']);
});

// --- unknown scenario names -------------------------------------------------------------------------------------

it.each([
  ['in the X-Emulator-Scenario header', scenarioHeader('no-such-thing'), {}, 'X-Emulator-Scenario'],
  ['in the metadata key emulator_scenario', {}, { emulator_scenario: 'no-such-thing' }, 'metadata.emulator_scenario'],
  [
    'in the header while the metadata names a real one',
    scenarioHeader('no-such-thing'),
    { emulator_scenario: 'instant' },
    'X-Emulator-Scenario',
  ],
])('refuses an unknown scenario name %s with 422, creating and freezing nothing', async (_name, headers, metadata, field) => {
  const res = await t.api.post('/v1/tasks', { ...socialNote(), metadata }, { ...headers, 'Idempotency-Key': 'try-1' });
  expect(res.status).toBe(422);
  expect(res.body.error.code).toBe('invalid_params');
  expect(res.body.error.details).toHaveLength(1);
  expect(res.body.error.details[0].field).toBe(field);
  expect(res.body.error.details[0].message).toContain("'no-such-thing'");
  expect((await t.api.get('/v1/tasks')).body.data).toEqual([]);
  expect((await t.admin.get('/_emulator/tasks')).body.data).toEqual([]);
  expect(await balance()).toMatchObject({ available: '100000.000', frozen: '0.000' });
  // The Idempotency-Key was not taken either: other parameters under it are a fresh task, not a conflict.
  const fresh = await t.api.post('/v1/tasks', video(), { 'Idempotency-Key': 'try-1' });
  expect(fresh.status).toBe(200);
  expect(fresh.headers['idempotent-replayed']).toBeUndefined();
});

// --- the file library -----------------------------------------------------------------------------------------

it('lists the file library: default and one scenario per task failure code, each described', async () => {
  const res = await t.admin.get('/_emulator/scenarios');
  expect(res.status).toBe(200);
  expect(res.body.object).toBe('list');
  const byName = new Map((res.body.data as { name: string }[]).map((s) => [s.name, s as Record<string, unknown>]));
  expect(byName.size).toBe(res.body.data.length);
  for (const name of ['default', ...FAILURE_CODES]) {
    const scenario = byName.get(name);
    expect(scenario, name).toBeDefined();
    expect(typeof scenario?.['description'], name).toBe('string');
    expect((scenario?.['description'] as string).length, name).toBeGreaterThan(0);
  }
  expect(byName.get('default')).toMatchObject({ outcome: 'succeeded' });
  expect(byName.has('canceled')).toBe(false);
  for (const code of FAILURE_CODES) {
    if (code === 'timeout') expect(byName.get(code)).toMatchObject({ outcome: 'timeout' });
    else expect(byName.get(code)).toMatchObject({ outcome: 'failed', failure: { code } });
  }
});

it.each([
  ['invalid_params', '2026-11-23T09:00:01+08:00', '2026-11-23T09:00:06+08:00'],
  ['content_rejected', '2026-11-23T09:00:02+08:00', '2026-11-23T09:01:02+08:00'],
  ['insufficient_points', null, '2026-11-23T09:00:01+08:00'],
  ['timeout', '2026-11-23T09:00:02+08:00', '2026-11-23T09:10:00+08:00'],
  ['service_unavailable', null, '2026-11-23T09:00:03+08:00'],
  ['capacity_shortage', null, '2026-11-23T09:05:00+08:00'],
  ['generation_failed', '2026-11-23T09:00:02+08:00', '2026-11-23T09:00:47+08:00'],
  ['no_result', '2026-11-23T09:00:01+08:00', '2026-11-23T09:00:05+08:00'],
])('fails a task sent to the file scenario %s with that code and a full refund', async (code, startedAt, finishedAt) => {
  const task = await t.api.post('/v1/tasks', socialNote(), scenarioHeader(code));
  expect(task.status).toBe(200);
  await advance(700);
  const got = (await t.api.get(`/v1/tasks/${task.body.id}`)).body;
  expect(got).toMatchObject({
    status: 'failed',
    started_at: startedAt,
    finished_at: finishedAt,
    error: { code },
    points: { frozen: '40.000', charged: '0.000', refunded: '40.000' },
    output: null,
  });
  expect(await balance()).toMatchObject({ available: '100000.000', frozen: '0.000' });
});

// --- loading scenarios at run time --------------------------------------------------------------------------------

it('loads scenarios with 201 and fills in the defaults', async () => {
  const res = await t.admin.post('/_emulator/scenarios', {
    scenarios: [
      { name: 'plain', outcome: 'succeeded' },
      { name: 'broken', outcome: 'failed', failure: { code: 'generation_failed' } },
    ],
  });
  expect(res.status).toBe(201);
  const plain = {
    name: 'plain',
    outcome: 'succeeded',
    queue_seconds: 2,
    processing_seconds: 10,
    cancelable_while_processing: false,
  };
  const broken = {
    name: 'broken',
    outcome: 'failed',
    failure: { code: 'generation_failed', during: 'processing' },
    queue_seconds: 2,
    processing_seconds: 10,
    cancelable_while_processing: false,
  };
  expect(res.body).toEqual({ object: 'list', data: [plain, broken] });
  const listed = (await t.admin.get('/_emulator/scenarios')).body.data as { name: string }[];
  expect(listed.find((s) => s.name === 'plain')).toEqual(plain);
  expect(listed.find((s) => s.name === 'broken')).toEqual(broken);

  const ok = await t.api.post('/v1/tasks', socialNote(), scenarioHeader('plain'));
  const bad = await t.api.post('/v1/tasks', socialNote(), scenarioHeader('broken'));
  await advance(60);
  expect(await lifeOf(ok.body.id)).toEqual({
    status: 'succeeded',
    started_at: '2026-11-23T09:00:02+08:00',
    finished_at: '2026-11-23T09:00:12+08:00',
    error: null,
  });
  expect(await lifeOf(bad.body.id)).toEqual({
    status: 'failed',
    started_at: '2026-11-23T09:00:02+08:00',
    finished_at: '2026-11-23T09:00:12+08:00',
    error: 'generation_failed',
  });
});

it('replaces a file scenario with a loaded one of the same name', async () => {
  const before = await scenarioNames();
  await load(
    t,
    { name: 'default', queue_seconds: 4, processing_seconds: 6, outcome: 'succeeded' },
    { name: 'timeout', queue_seconds: 1, outcome: 'failed', failure: { code: 'timeout', during: 'queued' } },
  );
  const listed = (await t.admin.get('/_emulator/scenarios')).body.data as { name: string }[];
  expect(listed).toHaveLength(before.length);
  expect([...listed.map((s) => s.name)].sort()).toEqual([...before].sort());
  expect(listed.filter((s) => s.name === 'default')).toEqual([
    { name: 'default', queue_seconds: 4, processing_seconds: 6, outcome: 'succeeded', cancelable_while_processing: false },
  ]);

  const plain = await t.api.post('/v1/tasks', socialNote());
  const named = await t.api.post('/v1/tasks', socialNote(), scenarioHeader('timeout'));
  await advance(30);
  expect(await lifeOf(plain.body.id)).toEqual({
    status: 'succeeded',
    started_at: '2026-11-23T09:00:04+08:00',
    finished_at: '2026-11-23T09:00:10+08:00',
    error: null,
  });
  expect(await lifeOf(named.body.id)).toEqual({
    status: 'failed',
    started_at: null,
    finished_at: '2026-11-23T09:00:01+08:00',
    error: 'timeout',
  });
});

it('replaces a scenario loaded earlier when one of the same name is loaded again', async () => {
  const before = await scenarioNames();
  await load(t, { name: 'custom', queue_seconds: 3, outcome: 'succeeded' });
  await load(t, { name: 'custom', queue_seconds: 8, outcome: 'failed', failure: { code: 'no_result', during: 'queued' } });
  const listed = (await t.admin.get('/_emulator/scenarios')).body.data as { name: string }[];
  expect(listed.map((s) => s.name)).toEqual(['custom', ...before]);
  expect(listed[0]).toMatchObject({ queue_seconds: 8, outcome: 'failed' });
  const task = await t.api.post('/v1/tasks', socialNote(), scenarioHeader('custom'));
  await advance(20);
  expect(await lifeOf(task.body.id)).toEqual({
    status: 'failed',
    started_at: null,
    finished_at: '2026-11-23T09:00:08+08:00',
    error: 'no_result',
  });
});

it.each([
  ['an unknown outcome', { scenarios: [{ name: 'x', outcome: 'exploded' }] }, 'scenarios[0].outcome'],
  ['outcome failed without failure', { scenarios: [{ name: 'x', outcome: 'failed' }] }, 'scenarios[0].failure'],
  ['an unknown property', { scenarios: [{ name: 'x', outcome: 'succeeded', colour: 'red' }] }, 'scenarios[0].colour'],
  [
    'a name used twice',
    {
      scenarios: [
        { name: 'twin', outcome: 'succeeded' },
        { name: 'twin', outcome: 'succeeded' },
      ],
    },
    'scenarios[1].name',
  ],
  ['a negative queue_seconds', { scenarios: [{ name: 'x', queue_seconds: -1, outcome: 'succeeded' }] }, 'scenarios[0].queue_seconds'],
  [
    'a negative per-model processing_seconds',
    { scenarios: [{ name: 'x', outcome: 'succeeded', per_model: { 'social-notes-data': { processing_seconds: -5 } } }] },
    'scenarios[0].per_model.social-notes-data.processing_seconds',
  ],
  ['a name with capitals and spaces', { scenarios: [{ name: 'Not Ok', outcome: 'succeeded' }] }, 'scenarios[0].name'],
  [
    'the failure code canceled',
    { scenarios: [{ name: 'x', outcome: 'failed', failure: { code: 'canceled' } }] },
    'scenarios[0].failure.code',
  ],
  [
    'an unknown failure.during',
    { scenarios: [{ name: 'x', outcome: 'failed', failure: { code: 'no_result', during: 'later' } }] },
    'scenarios[0].failure.during',
  ],
  ['no scenarios key', { name: 'x', outcome: 'succeeded' }, 'scenarios'],
  ['an empty list', { scenarios: [] }, 'scenarios'],
  [
    'a good scenario followed by a bad one',
    { scenarios: [{ name: 'good-one', outcome: 'succeeded' }, { name: 'bad-one', outcome: 'maybe' }] },
    'scenarios[1].outcome',
  ],
])('refuses a scenario body with %s: 422 naming the field, loading nothing', async (_name, body, field) => {
  const before = (await t.admin.get('/_emulator/scenarios')).body;
  const res = await t.admin.post('/_emulator/scenarios', body);
  expect(res.status).toBe(422);
  expect(res.body.error.code).toBe('invalid_params');
  expect(res.body.error.details.map((d: { field: string }) => d.field)).toEqual([field]);
  expect((await t.admin.get('/_emulator/scenarios')).body).toEqual(before);
});

it('says why failure is needed when the outcome is failed', async () => {
  const res = await t.admin.post('/_emulator/scenarios', { scenarios: [{ name: 'x', outcome: 'failed' }] });
  expect(res.body.error.details).toEqual([{ field: 'scenarios[0].failure', message: 'is required when outcome is failed' }]);
});

it('removes loaded scenarios on POST /_emulator/reset, bringing back the files\' own', async () => {
  const before = (await t.admin.get('/_emulator/scenarios')).body;
  await load(
    t,
    { name: 'custom', outcome: 'succeeded' },
    { name: 'default', queue_seconds: 30, outcome: 'failed', failure: { code: 'no_result' } },
  );
  expect((await t.admin.post('/_emulator/reset')).status).toBe(200);
  expect((await t.admin.get('/_emulator/scenarios')).body).toEqual(before);

  const gone = await t.api.post('/v1/tasks', socialNote(), scenarioHeader('custom'));
  expect(gone.status).toBe(422);
  expect(gone.body.error.details[0].field).toBe('X-Emulator-Scenario');
  const plain = await t.api.post('/v1/tasks', socialNote());
  await advance(20);
  expect(await lifeOf(plain.body.id)).toEqual({
    status: 'succeeded',
    started_at: '2026-11-23T09:00:01+08:00',
    finished_at: '2026-11-23T09:00:09+08:00',
    error: null,
  });
});

// --- per-model times ------------------------------------------------------------------------------------------

it('gives each model its own times from per_model, and the scenario\'s times to the others', async () => {
  await load(t, {
    name: 'paced',
    queue_seconds: 2,
    processing_seconds: 10,
    per_model: {
      'social-notes-data': { queue_seconds: 5 },
      'video-gen-2.0-fast': { queue_seconds: 20, processing_seconds: 100 },
    },
    outcome: 'succeeded',
  });
  const header = scenarioHeader('paced');
  const note = await t.api.post('/v1/tasks', socialNote(), header);
  const clip = await t.api.post('/v1/tasks', video(), header);
  const avatar = await t.api.post(
    '/v1/tasks',
    { model: 'avatar-photo', input: { image: 'https://cdn.example.com/p.jpg', audio: 'https://cdn.example.com/a.mp3' } },
    header,
  );
  expect(avatar.status).toBe(200);

  await advance(5);
  expect(await lifeOf(note.body.id)).toMatchObject({ status: 'processing', started_at: '2026-11-23T09:00:05+08:00' });
  expect(await lifeOf(clip.body.id)).toMatchObject({ status: 'queued', started_at: null });
  expect(await lifeOf(avatar.body.id)).toMatchObject({ status: 'processing', started_at: '2026-11-23T09:00:02+08:00' });

  await advance(200);
  expect(await lifeOf(note.body.id)).toEqual({
    status: 'succeeded',
    started_at: '2026-11-23T09:00:05+08:00',
    finished_at: '2026-11-23T09:00:15+08:00',
    error: null,
  });
  expect(await lifeOf(clip.body.id)).toEqual({
    status: 'succeeded',
    started_at: '2026-11-23T09:00:20+08:00',
    finished_at: '2026-11-23T09:02:00+08:00',
    error: null,
  });
  expect(await lifeOf(avatar.body.id)).toEqual({
    status: 'succeeded',
    started_at: '2026-11-23T09:00:02+08:00',
    finished_at: '2026-11-23T09:00:12+08:00',
    error: null,
  });
});

// --- the rejected outcome -------------------------------------------------------------------------------------

it('answers 422 content_rejected for a rejected scenario, creating and freezing nothing', async () => {
  const res = await t.api.post('/v1/tasks', socialNote(), scenarioHeader('rejected'));
  expect(res.status).toBe(422);
  expect(res.body.error.code).toBe('content_rejected');
  expect(res.body.error.details ?? []).toEqual([]);
  expect((await t.api.get('/v1/tasks')).body.data).toEqual([]);
  expect((await t.admin.get('/_emulator/tasks')).body.data).toEqual([]);
  expect(await balance()).toMatchObject({ available: '100000.000', frozen: '0.000' });
});

it('rejects through a match rule too, with the scenario\'s rejection_message', async () => {
  await load(t, {
    name: 'strict-review',
    match: { models: ['video-gen-2.0-fast'] },
    outcome: 'rejected',
    rejection_message: 'The prompt failed review.',
  });
  const res = await t.api.post('/v1/tasks', video());
  expect(res.status).toBe(422);
  expect(res.body.error).toMatchObject({ code: 'content_rejected', message: 'The prompt failed review.' });
  expect(await balance()).toMatchObject({ available: '100000.000', frozen: '0.000' });
  expect((await t.api.post('/v1/tasks', socialNote())).status).toBe(200);
});

it('still replays a task accepted earlier when the scenario header now says rejected', async () => {
  const first = await t.api.post('/v1/tasks', socialNote(), { 'Idempotency-Key': 'order-7' });
  expect(first.status).toBe(200);
  const again = await t.api.post('/v1/tasks', socialNote(), { ...scenarioHeader('rejected'), 'Idempotency-Key': 'order-7' });
  expect(again.status).toBe(200);
  expect(again.headers['idempotent-replayed']).toBe('true');
  expect(again.body).toEqual(first.body);
  const other = await t.api.post('/v1/tasks', socialNote(), { ...scenarioHeader('rejected'), 'Idempotency-Key': 'order-8' });
  expect(other.status).toBe(422);
  expect(other.body.error.code).toBe('content_rejected');
  expect((await t.api.get('/v1/tasks')).body.data).toHaveLength(1);
  expect(await balance()).toMatchObject({ available: '99960.000', frozen: '40.000' });
});

it('does not take the Idempotency-Key of a rejected submission', async () => {
  const rejected = await t.api.post('/v1/tasks', socialNote(), { ...scenarioHeader('rejected'), 'Idempotency-Key': 'order-9' });
  expect(rejected.status).toBe(422);
  const accepted = await t.api.post('/v1/tasks', socialNote(), { 'Idempotency-Key': 'order-9' });
  expect(accepted.status).toBe(200);
  expect(accepted.headers['idempotent-replayed']).toBeUndefined();
  expect(accepted.body.status).toBe('queued');
});
