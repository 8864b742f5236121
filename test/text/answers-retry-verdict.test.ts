import OpenAI from 'openai';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { createEmulator } from '../../src/index.ts';
import type { Emulator } from '../../src/index.ts';
import type { Verdict } from '../../src/verdict/index.ts';

// A retrying client against one scenario that answers "two 429s, then success", and the verdict on how it retried:
// a client that waits the Retry-After each time passes the Retry-After and back-off checks, one that sends the
// call again at once fails both. The verdict measures real time (a client waits in real time whatever the
// emulator's clock shows), so the scenario asks for the shortest whole wait, 1 s, and the careful client's test
// takes some 2 s.
// @see docs/reference/scenarios.md "Answers on demand" (sequences), docs/guides/resilience.md (the verdict)

const ADMIN_TOKEN = 'x';
const RATE_LIMITED_TWICE = {
  name: 'busy-then-ok',
  outcome: 'succeeded',
  match: { formats: ['chat'], last_user: { contains: 'retry me' } },
  text: { answers: [{ error: { code: 'rate_limited', retry_after: 1 }, times: 2 }, { text: 'ok' }] },
};
const BODY = { model: 'svc-text-lite', messages: [{ role: 'user' as const, content: 'please retry me' }] };

let emulator: Emulator;
let base: string;
let key: string;

beforeEach(async () => {
  emulator = await createEmulator({ clock: 'manual', adminToken: ADMIN_TOKEN, log: () => undefined });
  base = await emulator.listen(0);
  const account = (await admin<{ id: string }>('POST', '/_emulator/accounts', { points: '1000.000' })).id;
  key = (await admin<{ key: string }>('POST', `/_emulator/accounts/${account}/keys`, {})).key;
  await admin('POST', '/_emulator/scenarios', { scenarios: [RATE_LIMITED_TWICE] });
});
afterEach(() => emulator.close());

async function admin<T>(method: string, path: string, body?: object): Promise<T> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  if (res.status !== 201 && res.status !== 200) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

const verdict = (): Promise<Verdict> => admin<Verdict>('GET', `/_emulator/verdict?key=${encodeURIComponent(key)}`);
const check = (v: Verdict, id: string) => v.checks.find((c) => c.id === id);
const statuses = async (): Promise<number[]> =>
  (await admin<{ data: { status: number }[] }>('GET', `/_emulator/records?key=${encodeURIComponent(key)}`)).data.map((r) => r.status).reverse();

it('the openai client, which waits the Retry-After, gets through two 429s to the answer, and the verdict passes its back-off', async () => {
  const client = new OpenAI({ baseURL: `${base}/v1`, apiKey: key, maxRetries: 2 });
  const started = Date.now();
  const completion = await client.chat.completions.create(BODY);
  expect(completion.choices[0]?.message.content).toBe('ok');
  // Two waits of the 1 s asked for.
  expect(Date.now() - started).toBeGreaterThanOrEqual(2000);
  expect(await statuses()).toEqual([429, 429, 200]);

  const v = await verdict();
  expect(check(v, 'client.retry-after.respected')).toMatchObject({ status: 'pass' });
  expect(check(v, 'client.retries.back-off')).toMatchObject({ status: 'pass' });
  expect(v.checks.filter((c) => c.status === 'fail')).toEqual([]);
  expect(v.ok).toBe(true);
});

it('a client that sends the call again at once fails the verdict: within Retry-After, and no back-off', async () => {
  const sent: { status: number; retryAfter: string | null; requestId: string | null }[] = [];
  for (;;) {
    const res = await fetch(`${base}/v1/chat/completions`, { method: 'POST', headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' }, body: JSON.stringify(BODY) });
    await res.arrayBuffer();
    sent.push({ status: res.status, retryAfter: res.headers.get('retry-after'), requestId: res.headers.get('x-request-id') });
    if (res.status !== 429 || sent.length === 5) break;
  }
  expect(sent.map((s) => [s.status, s.retryAfter])).toEqual([[429, '1'], [429, '1'], [200, null]]);

  const v = await verdict();
  const [first, second, third] = sent.map((s) => s.requestId);
  expect(check(v, 'client.retry-after.respected')).toMatchObject({ status: 'fail', evidence: expect.arrayContaining([first, second, third]) });
  expect(check(v, 'client.retry-after.respected')?.reason).toMatch(/^2 request\(s\) within Retry-After: POST \/v1\/chat\/completions .* after a 429 that asked for 1 s/);
  expect(check(v, 'client.retries.back-off')).toMatchObject({ status: 'fail', reason: 'POST /v1/chat/completions retried less than 250 ms after a failure', evidence: [first, second, third] });
  expect(v.ok).toBe(false);
});
