import request from 'supertest';
import { afterEach, expect, it } from 'vitest';
import { createLogger } from '../../src/log/index.ts';
import { ADMIN_TOKEN, DEMO_KEY, startEmulator } from '../support/harness.ts';
import type { TestEmulator } from '../support/harness.ts';

let t: TestEmulator | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

it("logs the dashboard's own reads at debug and everything else, its actions included, at info", async () => {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({ level: 'debug', format: 'json', now: () => 0, write: (line) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
  t = await startEmulator({ logger });
  const app = t.emulator.app;
  const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };
  const dashboard = { ...admin, 'X-Emulator-Client': 'dashboard' };
  await request(app).get('/_emulator/clock').set(dashboard).expect(200);
  await request(app).get('/_emulator/clock').set(admin).expect(200);
  await request(app).post('/_emulator/clock/advance').set(dashboard).send({ seconds: 1 }).expect(200);
  await request(app).get('/v1/tasks').set({ Authorization: `Bearer ${DEMO_KEY}`, 'X-Emulator-Client': 'dashboard' }).expect(200);
  const requests = lines.filter((l) => typeof l['request_id'] === 'string' && typeof l['latency_ms'] === 'number');
  expect(requests.map((l) => [l['level'], l['message']])).toEqual([
    ['debug', 'GET /_emulator/clock 200'],
    ['info', 'GET /_emulator/clock 200'],
    ['info', 'POST /_emulator/clock/advance 200'],
    // The header marks the dashboard's reads; it is no reason to hide a call of the service API.
    ['info', 'GET /v1/tasks 200'],
  ]);
});
