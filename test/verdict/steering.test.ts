import { afterEach, expect, it } from 'vitest';
import { socialNote } from '../support/harness.ts';
import { addFaults, call, checkOf, clean, realWait, startWorld, verdictOf } from './world.ts';
import type { Answered, World } from './world.ts';

// The verdict counts only the client's own behaviour: a submission that differs from an earlier one only in its
// X-Emulator-Scenario header or its metadata `emulator_scenario` is the test steering the next step, not a careless
// retry, and no check holds it against the client. Each case sends real HTTP to a started emulator and reads
// `GET /_emulator/verdict?key=`; next to it, the same client sending the same steering again (a real careless
// retry) still fails.

let world: World;
afterEach(() => world.close());

const newKey = async (): Promise<string> => {
  const res = await world.t.admin.post(`/_emulator/accounts/${world.account.id}/keys`, {});
  expect(res.status).toBe(201);
  return res.body.key as string;
};
const ids = (...answers: Answered[]) => answers.map((a) => a.requestId);

/** The two ways a submit names its scenario: the header, or the metadata key. */
type Steer = (scenario: string) => { headers: Record<string, string>; body: Record<string, unknown> };
const byHeader: Steer = (scenario) => ({ headers: { 'X-Emulator-Scenario': scenario }, body: socialNote() });
const byMetadata: Steer = (scenario) => ({ headers: {}, body: { ...socialNote(), metadata: { order: 'o-1', emulator_scenario: scenario } } });
const STEERS = [
  ['X-Emulator-Scenario header', byHeader],
  ['metadata.emulator_scenario', byMetadata],
] as const;

const submit = (key: string, steer: Steer, scenario: string) => call(world, 'POST', '/v1/tasks', { key, ...steer(scenario) });

/** The key's next submit answered with `code` (and nothing done), whatever it names. */
const failNextSubmit = (key: string, fault: Record<string, unknown>) =>
  addFaults(world, [{ match: { method: 'POST', path: '/v1/tasks', key }, fault: { kind: 'error', ...fault }, times: 1 }]);

it.each(STEERS)('client.submit.idempotent-retry: a submit steered by the %s to another scenario after a 503 is no retry', async (_how, steer) => {
  world = await startWorld();
  const key = await newKey();
  await failNextSubmit(key, { code: 'service_unavailable' });
  expect((await submit(key, steer, 'instant')).status).toBe(503);
  await realWait(300);
  expect((await submit(key, steer, 'slow')).status).toBe(200);
  const verdict = await verdictOf(world, { key });
  expect(checkOf(verdict, 'client.submit.idempotent-retry')?.status).toBe('not_exercised');
  expect(clean(verdict)).toEqual([]);
});

it.each(STEERS)('client.submit.idempotent-retry: a submit sent again after a 503 with the same %s, without a key, still fails', async (_how, steer) => {
  world = await startWorld();
  const key = await newKey();
  await failNextSubmit(key, { code: 'service_unavailable' });
  const failed = await submit(key, steer, 'instant');
  await realWait(300);
  const retry = await submit(key, steer, 'instant');
  expect([failed.status, retry.status]).toEqual([503, 200]);
  const check = checkOf(await verdictOf(world, { key }), 'client.submit.idempotent-retry');
  expect(check).toMatchObject({ status: 'fail', reason: 'a submit retried after a 503 without an Idempotency-Key', evidence: ids(failed, retry) });
});

it.each(STEERS)('client.errors.not-retried: a submit refused for a scenario named by the %s that is not there, sent again naming one that is, passes', async (_how, steer) => {
  world = await startWorld();
  const key = await newKey();
  const refused = await submit(key, steer, 'no-such-scenario');
  expect([refused.status, (refused.body['error'] as { code: string }).code]).toEqual([422, 'invalid_params']);
  expect((await submit(key, steer, 'instant')).status).toBe(200);
  const verdict = await verdictOf(world, { key });
  expect(checkOf(verdict, 'client.errors.not-retried')?.status).toBe('pass');
  expect(clean(verdict)).toEqual([]);
});

it('client.errors.not-retried: the same unknown scenario sent again unchanged still fails', async () => {
  world = await startWorld();
  const key = await newKey();
  const [first, again] = [await submit(key, byHeader, 'no-such-scenario'), await submit(key, byHeader, 'no-such-scenario')];
  expect([first.status, again.status]).toEqual([422, 422]);
  const check = checkOf(await verdictOf(world, { key }), 'client.errors.not-retried');
  expect(check).toMatchObject({ status: 'fail', reason: 'POST /v1/tasks sent again unchanged after 422 invalid_params', evidence: ids(first, again) });
});

it.each(STEERS)('client.retry-after.respected: the refused submit steered by the %s to another scenario at once is the test’s, not the client’s', async (_how, steer) => {
  world = await startWorld();
  const key = await newKey();
  await failNextSubmit(key, { code: 'rate_limited', retry_after: 2 });
  const refused = await submit(key, steer, 'instant');
  expect([refused.status, refused.retryAfter]).toEqual([429, '2']);
  expect((await submit(key, steer, 'slow')).status).toBe(200);
  const verdict = await verdictOf(world, { key });
  // Judged (a 429 with Retry-After was answered), and nothing the client did broke it.
  expect(checkOf(verdict, 'client.retry-after.respected')?.status).toBe('pass');
  expect(clean(verdict)).toEqual([]);
});

it('client.retry-after.respected: the same submit sent again at once after its 429 still fails, and so does another request', async () => {
  world = await startWorld();
  const key = await newKey();
  await failNextSubmit(key, { code: 'rate_limited', retry_after: 2 });
  const refused = await submit(key, byHeader, 'instant');
  const again = await submit(key, byHeader, 'instant');
  // Another call than the refused one is the client's to hold back, steered or not.
  const other = await call(world, 'POST', '/v1/tasks', { key, headers: { 'X-Emulator-Scenario': 'slow' }, body: socialNote({ note: 'https://notes.example.com/n/456' }) });
  expect([refused.status, again.status, other.status]).toEqual([429, 200, 200]);
  const check = checkOf(await verdictOf(world, { key }), 'client.retry-after.respected');
  expect(check).toMatchObject({ status: 'fail', evidence: ids(refused, again, other) });
  expect(check?.reason).toMatch(/^2 request\(s\) within Retry-After: POST \/v1\/tasks/);
});

// A text call's scenario is named by the header only; one that answers 503 lets a test see the client's error path.
const TEXT_DOWN = { name: 'text-down', outcome: 'succeeded', text: { error: { code: 'service_unavailable' } } };
const chat = { model: 'svc-text-lite', max_tokens: 8, messages: [{ role: 'user', content: 'Say hello' }] };

it('client.retries.back-off: a text call steered to a 503, then at once to the default answer, is two calls, not a retry run', async () => {
  world = await startWorld();
  const key = await newKey();
  expect((await world.t.admin.post('/_emulator/scenarios', { scenarios: [TEXT_DOWN] })).status).toBe(201);
  const down = await call(world, 'POST', '/v1/chat/completions', { key, body: chat, headers: { 'X-Emulator-Scenario': 'text-down' } });
  const up = await call(world, 'POST', '/v1/chat/completions', { key, body: chat, headers: { 'X-Emulator-Scenario': 'default' } });
  expect([down.status, up.status]).toEqual([503, 200]);
  const verdict = await verdictOf(world, { key });
  expect(checkOf(verdict, 'client.retries.back-off')?.status).toBe('not_exercised');
  expect(clean(verdict)).toEqual([]);
});

it('client.retries.back-off: the text call sent again at once under the same steering still fails', async () => {
  world = await startWorld();
  const key = await newKey();
  expect((await world.t.admin.post('/_emulator/scenarios', { scenarios: [TEXT_DOWN] })).status).toBe(201);
  const steered = { key, body: chat, headers: { 'X-Emulator-Scenario': 'text-down' } };
  const answers = [await call(world, 'POST', '/v1/chat/completions', steered), await call(world, 'POST', '/v1/chat/completions', steered)];
  expect(answers.map((a) => a.status)).toEqual([503, 503]);
  const check = checkOf(await verdictOf(world, { key }), 'client.retries.back-off');
  expect(check).toMatchObject({ status: 'fail', reason: 'POST /v1/chat/completions retried less than 250 ms after a failure', evidence: ids(...answers) });
});

it('digests a submit nested too deep to sort as its bytes: the request is answered, the next one too, and the verdict judges both', async () => {
  world = await startWorld();
  const key = await newKey();
  // 10,000 levels, sent as text: JSON.parse takes it, sorting its keys for the digest would overflow the stack.
  const deep = `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`;
  const body = JSON.stringify({ ...socialNote(), metadata: { emulator_scenario: 'instant', deep: 0 } }).replace('"deep":0', `"deep":${deep}`);
  const first = await fetch(`${world.base}/v1/tasks`, { method: 'POST', headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' }, body });
  expect(first.headers.get('x-request-id')).toMatch(/^req_/);
  expect([200, 400, 422]).toContain(first.status);
  await first.arrayBuffer();
  const next = await submit(key, byHeader, 'instant');
  expect(next.status).toBe(200);
  const verdict = await verdictOf(world, { key });
  expect(verdict.checks.length).toBeGreaterThan(0);
});
