import request from 'supertest';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { DEMO_KEY, socialNote, startEmulator } from '../support/harness.ts';
import type { TestEmulator } from '../support/harness.ts';

// With `recordContent: true` (`--record-content`) every /v1 call's record keeps its request and answer bodies,
// refused calls first of all, cut at 64 KiB and with secrets masked; without it, none. Read through
// GET /_emulator/records/{id}, each answer checked against openapi/admin.yaml by the harness.

let t: TestEmulator;
beforeAll(async () => {
  t = await startEmulator({ recordContent: true });
});
afterAll(() => t.close());
beforeEach(() => {
  t.emulator.control.faults.clear();
});

interface Body {
  content_type: string | null;
  size: number | null;
  truncated: boolean;
  text: string;
}
interface SeenRecord {
  error_code: string | null;
  injected_fault?: { kind: string };
  bodies: { request: Body; response: Body };
}

const recordOf = async (res: { headers: { [name: string]: string } }): Promise<SeenRecord> => {
  const read = await t.admin.get(`/_emulator/records/${res.headers['x-request-id']}`);
  expect(read.status).toBe(200);
  return read.body as SeenRecord;
};

it('keeps the request and the 422 answer of a refused submission, and nothing of them without recordContent', async () => {
  const sent = socialNote({ mode: 'no-such-mode' });
  const res = await t.api.post('/v1/tasks', sent);
  expect(res.status).toBe(422);
  const { bodies } = await recordOf(res);
  expect(JSON.parse(bodies.request.text)).toEqual(sent);
  expect(bodies.request).toMatchObject({ content_type: 'application/json', truncated: false });
  expect(JSON.parse(bodies.response.text)).toEqual(res.body);
  expect(bodies.response).toMatchObject({ content_type: expect.stringContaining('application/json'), size: Buffer.byteLength(res.text), truncated: false });

  // Without the option, the same call's record keeps nothing of either body.
  const plain = await startEmulator();
  try {
    const refused = await plain.api.post('/v1/tasks', sent);
    const read = await plain.admin.get(`/_emulator/records/${refused.headers['x-request-id']}`);
    expect(read.body).toMatchObject({ status: 422, error_code: 'invalid_params' });
    expect(read.body.bodies).toBeUndefined();
    expect(JSON.stringify(read.body)).not.toContain('no-such-mode');
  } finally {
    await plain.close();
  }
});

it('keeps the body of a call refused for its key before the body was read, and the 401 answer', async () => {
  const res = await request(t.emulator.app).post('/v1/tasks').set('Authorization', 'Bearer sk-wrong-key-0000').send(socialNote());
  expect(res.status).toBe(401);
  const record = await recordOf(res);
  expect(record.error_code).toBe('invalid_api_key');
  expect(JSON.parse(record.bodies.request.text)).toEqual(socialNote());
  expect(JSON.parse(record.bodies.response.text)).toMatchObject({ error: { code: 'invalid_api_key' } });
});

it('keeps the answer of a 503 a fault rule injected', async () => {
  await t.admin.post('/_emulator/faults', { rules: [{ match: { path: '/v1/tasks' }, fault: { kind: 'error', code: 'service_unavailable' }, times: 1 }] });
  const res = await t.api.post('/v1/tasks', socialNote());
  expect(res.status).toBe(503);
  const record = await recordOf(res);
  expect(record.injected_fault).toMatchObject({ kind: 'error' });
  expect(JSON.parse(record.bodies.request.text)).toEqual(socialNote());
  expect(JSON.parse(record.bodies.response.text)).toEqual(res.body);
});

it('keeps a text stream as the events sent, cut at 64 KiB and marked so', async () => {
  const loaded = await t.admin.post('/_emulator/scenarios', { scenarios: [{ name: 'long-answer', outcome: 'succeeded', text: { output_tokens: 4000 } }] });
  expect(loaded.status).toBe(201);
  const res = await request(t.emulator.app)
    .post('/v1/chat/completions')
    .set({ Authorization: `Bearer ${DEMO_KEY}`, 'X-Emulator-Scenario': 'long-answer' })
    .send({ model: 'svc-text-pro', messages: [{ role: 'user', content: 'Tell me everything.' }], stream: true, max_tokens: 8000 });
  expect(res.status).toBe(200);
  const { bodies } = await recordOf(res);
  const { response } = bodies;
  expect(response).toMatchObject({ content_type: expect.stringContaining('text/event-stream'), size: Buffer.byteLength(res.text), truncated: true });
  expect(Buffer.byteLength(response.text)).toBeLessThanOrEqual(64 * 1024);
  expect(Buffer.byteLength(response.text)).toBeGreaterThan(64 * 1024 - 4);
  expect(res.text.startsWith(response.text)).toBe(true);
  expect(response.text).toMatch(/^data: \{/);
});

it('masks secrets in a body as recordings do', async () => {
  const sent = { ...socialNote(), webhook_url: 'https://hooks:hunter2-pass@hooks.example.com/in', metadata: { note: `key ${DEMO_KEY}-0123456789 whsec_c2VjcmV0c2VjcmV0` } };
  const res = await t.api.post('/v1/tasks', sent);
  const { bodies } = await recordOf(res);
  expect(bodies.request.text).not.toContain('hunter2');
  expect(bodies.request.text).not.toContain('c2VjcmV0c2VjcmV0');
  expect(bodies.request.text).not.toContain(`${DEMO_KEY}-0123456789`);
  expect(JSON.parse(bodies.request.text)).toMatchObject({ webhook_url: 'https://[redacted]@hooks.example.com/in', metadata: { note: 'key sk-[redacted] whsec_[redacted]' } });
});
