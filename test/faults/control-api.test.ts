import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import type { FaultFile } from '../../src/faults/index.ts';
import { createEmulator } from '../../src/index.ts';
import { StoreOpenError } from '../../src/store/index.ts';
import { ADMIN_TOKEN, startEmulator } from '../support/harness.ts';
import type { TestEmulator } from '../support/harness.ts';

// The control API of run-time faults: POST/GET/DELETE /_emulator/faults and DELETE /_emulator/faults/{id}, each
// answer checked against openapi/admin.yaml by the harness; the same operations on `emulator.control.faults`.

const REQUEST_ID = /^req_[a-z0-9]{24}$/;
const auth = { Authorization: `Bearer ${ADMIN_TOKEN}` };
const UNAVAILABLE = { match: { path: '/v1/models' }, fault: { kind: 'error', code: 'service_unavailable' }, times: 2 };
const SLOW = { match: { method: 'POST', path: '/v1/tasks*' }, fault: { kind: 'latency', ms: 5 } };

let t: TestEmulator;
beforeAll(async () => {
  t = await startEmulator();
});
afterAll(() => t.close());
beforeEach(() => {
  t.emulator.control.faults.clear();
});

const del = (path: string) => t.admin.send((r) => r.delete(path).set(auth));
const models = () => request(t.emulator.app).get('/v1/models').set('Authorization', 'Bearer sk-emulator-demo');

it('adds rules (201, each with an id and zero counts), lists them in order with how many requests each matched and hit', async () => {
  const added = await t.admin.post('/_emulator/faults', { rules: [UNAVAILABLE, SLOW] });
  expect(added.status).toBe(201);
  expect(added.body).toEqual({ data: [{ ...UNAVAILABLE, id: 'fault_1', matched: 0, hits: 0 }, { ...SLOW, id: 'fault_2', matched: 0, hits: 0 }] });

  expect((await models()).status).toBe(503);
  expect((await models()).status).toBe(503);
  expect((await models()).status).toBe(200);
  const listed = await t.admin.get('/_emulator/faults');
  expect(listed.body.data).toMatchObject([
    { id: 'fault_1', matched: 2, hits: 2 },
    { id: 'fault_2', matched: 0, hits: 0 },
  ]);
  // Rules added later are tried after those in force, and numbered on.
  const more = await t.admin.post('/_emulator/faults', { rules: [{ fault: { kind: 'reset' }, match: { path: '/v1/files' } }], seed: 's' });
  expect(more.body.data).toMatchObject([{ id: 'fault_3' }]);
  expect((await t.admin.get('/_emulator/faults')).body.data.map((r: { id: string }) => r.id)).toEqual(['fault_1', 'fault_2', 'fault_3']);
});

it('removes one rule, answering it with its last counts; an unknown id is 404 not_found in the documented shape', async () => {
  await t.admin.post('/_emulator/faults', { rules: [UNAVAILABLE, SLOW] });
  await models();
  const removed = await del('/_emulator/faults/fault_1');
  expect(removed.status).toBe(200);
  expect(removed.body).toEqual({ ...UNAVAILABLE, id: 'fault_1', matched: 1, hits: 1 });
  expect((await models()).status).toBe(200);
  expect((await t.admin.get('/_emulator/faults')).body.data.map((r: { id: string }) => r.id)).toEqual(['fault_2']);

  const again = await del('/_emulator/faults/fault_1');
  expect(again.status).toBe(404);
  expect(again.body).toEqual({ error: { code: 'not_found', message: "No fault rule 'fault_1'.", request_id: expect.stringMatching(REQUEST_ID) } });
  expect(again.body.error.request_id).toBe(again.headers['x-request-id']);
});

it('clears every rule, saying how many it removed', async () => {
  await t.admin.post('/_emulator/faults', { rules: [UNAVAILABLE, SLOW] });
  const cleared = await del('/_emulator/faults');
  expect(cleared.body).toEqual({ removed: 2 });
  expect((await t.admin.get('/_emulator/faults')).body).toEqual({ data: [] });
  expect((await models()).status).toBe(200);
  expect((await del('/_emulator/faults')).body).toEqual({ removed: 0 });
});

it('clears the rules on POST /_emulator/reset', async () => {
  await t.admin.post('/_emulator/faults', { rules: [UNAVAILABLE] });
  expect((await t.admin.post('/_emulator/reset')).status).toBe(200);
  expect((await t.admin.get('/_emulator/faults')).body).toEqual({ data: [] });
  expect((await models()).status).toBe(200);
});

it("keeps a call record's injected_fault through a state export and import (which, as a reset, clears the rules)", async () => {
  await t.admin.post('/_emulator/faults', { rules: [UNAVAILABLE] });
  const requestId = (await models()).headers['x-request-id'] as string;
  const document = (await t.admin.post('/_emulator/state/export')).body as object;
  expect((await t.admin.post('/_emulator/state/import', document)).status).toBe(200);
  expect((await t.admin.get(`/_emulator/records/${requestId}`)).body).toMatchObject({ status: 503, injected_fault: { rule: 'fault_1', kind: 'error' } });
  expect((await t.admin.get('/_emulator/faults')).body).toEqual({ data: [] });
});

it.each([
  ['an unknown error code', { rules: [{ fault: { kind: 'error', code: 'no_such_code' } }] }, 'rules[0].fault.code'],
  ['a kind without its field', { rules: [{ fault: { kind: 'latency' } }] }, 'rules[0].fault.ms'],
  ['a field the kind does not take', { rules: [{ fault: { kind: 'reset', ms: 3 } }] }, 'rules[0].fault.ms'],
  ['no rules', { rules: [] }, 'rules'],
  ['a probability over 1', { rules: [{ fault: { kind: 'reset' }, probability: 2 }] }, 'rules[0].probability'],
  ['a callback match on a request fault', { rules: [{ match: { event: 'task.succeeded' }, fault: { kind: 'reset' } }] }, 'rules[0].match.event'],
  ['a request match on a callback fault', { rules: [{ fault: { kind: 'error', code: 'rate_limited' } }, { match: { path: '/v1/tasks' }, fault: { kind: 'duplicate' } }] }, 'rules[1].match.path'],
])('refuses %s with 422 invalid_params naming the field, and adds nothing', async (_name, body, field) => {
  const res = await t.admin.post('/_emulator/faults', body);
  expect(res.status).toBe(422);
  expect(res.body.error.code).toBe('invalid_params');
  expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
  expect((await t.admin.get('/_emulator/faults')).body).toEqual({ data: [] });
});

it('refuses a body that is not JSON with 400 bad_request', async () => {
  const res = await t.admin.send((r) => r.post('/_emulator/faults').set({ ...auth, 'Content-Type': 'application/json' }).send('{"rules": ['));
  expect(res.status).toBe(400);
  expect(res.body.error.code).toBe('bad_request');
});

it('offers the same operations on emulator.control.faults', async () => {
  const { faults } = t.emulator.control;
  const { data } = faults.add({ rules: [{ fault: { kind: 'trickle', bytes_per_second: 100 } }] });
  expect(data).toEqual([{ fault: { kind: 'trickle', bytes_per_second: 100 }, id: 'fault_1', matched: 0, hits: 0 }]);
  expect(faults.list().data).toHaveLength(1);
  // Rules from elsewhere (a JSON file, an untyped caller) are checked as the control API checks them.
  const misplaced = JSON.parse('{"rules": [{"match": {"model": "x"}, "fault": {"kind": "delay", "seconds": 1}}]}') as FaultFile;
  expect(() => faults.add(misplaced)).toThrow(expect.objectContaining({ code: 'invalid_params' }));
  expect(faults.remove('fault_1')).toMatchObject({ id: 'fault_1' });
  expect(() => faults.remove('fault_1')).toThrow(expect.objectContaining({ code: 'not_found' }));
  expect(faults.clear()).toEqual({ removed: 0 });
});

it('starts with the rules of a fault file in force; a reset clears them with the rest', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-faults-'));
  const file = join(dir, 'faults.yaml');
  writeFileSync(file, 'rules:\n  - match: { path: /v1/models }\n    fault: { kind: error, code: capacity_shortage }\n    times: 1\n');
  const emulator = await createEmulator({ clock: 'manual', adminToken: ADMIN_TOKEN, log: () => undefined, faults: file });
  try {
    const call = () => request(emulator.app).get('/v1/models').set('Authorization', 'Bearer sk-emulator-demo');
    expect(emulator.control.faults.list().data).toMatchObject([{ id: 'fault_1', fault: { code: 'capacity_shortage' }, matched: 0 }]);
    expect((await call()).status).toBe(503);
    expect((await call()).status).toBe(200);
    emulator.control.reset();
    expect(emulator.control.faults.list().data).toEqual([]);
    expect((await call()).status).toBe(200);
  } finally {
    await emulator.close();
  }

  const bad = join(dir, 'bad.json');
  writeFileSync(bad, JSON.stringify({ rules: [{ match: { event: 'task.failed' }, fault: { kind: 'cut', after_chunks: 1 } }] }));
  const refused = createEmulator({ clock: 'manual', log: () => undefined, faults: bad });
  await expect(refused).rejects.toThrow(StoreOpenError);
  await expect(refused).rejects.toThrow(`the fault file ${bad} is not a rule set: rules[0].match.event: a request fault takes /v1 requests`);
});
