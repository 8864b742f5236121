import { afterEach, beforeEach, expect, it } from 'vitest';
import { newAccount, startEmulator } from '../support/harness.ts';
import type { ApiClient, TestEmulator } from '../support/harness.ts';

// Strict text answers (`textAnswers: 'strict'`): a text call no scenario chooses is refused in its format's error
// shape, nothing charged, naming what it asked and the rules that came closest; so is a fixed answer that does not
// fit its call. Every answer is checked against the documents.
// @see docs/reference/scenarios.md "Answers on demand"

const CHAT = '/v1/chat/completions';
const MESSAGES = '/v1/messages';

let t: TestEmulator;
let api: ApiClient;
let account: { id: string; key: string };
beforeEach(async () => {
  t = await startEmulator({ textAnswers: 'strict' });
  account = await newAccount(t, '1000.000');
  api = t.as(account.key);
  const res = await t.admin.post('/_emulator/scenarios', {
    scenarios: [
      { name: 'weather', outcome: 'succeeded', match: { formats: ['chat'], last_user: { contains: 'weather' }, assistant_turns: 0 }, text: { text: 'Sunny.' } },
      { name: 'summary', outcome: 'succeeded', match: { response_format: { type: 'json_schema' } }, text: { json: { title: 7 } } },
      { name: 'once', outcome: 'succeeded', match: { last_user: { contains: 'once' } }, text: { text: 'Once.', times: 1 } },
    ],
  });
  expect(res.status).toBe(201);
});
afterEach(() => t.close());

const ledgerOf = async (requestId: string): Promise<unknown[]> =>
  ((await t.admin.get(`/_emulator/accounts/${account.id}/ledger`)).body.data as { call_id?: string }[]).filter((e) => e.call_id === requestId);

it('refuses a chat call no rule fits with 422 no_matching_answer, naming what it asked and the closest rules, and charges nothing', async () => {
  const res = await api.post(CHAT, { model: 'svc-text-pro', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'How is the weather?' }, { role: 'assistant', content: 'Where?' }, { role: 'user', content: 'weather in Oslo' }] });
  expect(res.status).toBe(422);
  const requestId = res.headers['x-request-id'] as string;
  expect(res.body).toEqual({ error: { type: 'no_matching_answer', code: 'no_matching_answer', param: null, request_id: requestId, message: expect.any(String) } });
  expect(res.body.error.message).toBe(
    'No scenario answers this call (text answers are strict): a chat call to svc-text-pro, not streamed, last user message "weather in Oslo", ' +
      `system "Be brief.", 1 assistant turn; closest: 'weather' (fits formats, last_user; not assistant_turns), 'summary' (not response_format), 'once' (not last_user).`,
  );
  expect(await ledgerOf(requestId)).toEqual([]);
  expect((await t.admin.get(`/_emulator/accounts/${account.id}`)).body).toMatchObject({ available: '1000.000', frozen: '0.000' });
  expect(t.emulator.internals.db.calls.get(requestId)).toMatchObject({ status: 422, error_code: 'no_matching_answer' });
});

it('refuses an unmatched Messages call in the Messages error shape, and says a rule that fits was used up', async () => {
  const body = { model: 'svc-text-lite', max_tokens: 16, messages: [{ role: 'user', content: 'just once' }] };
  const first = await api.post(MESSAGES, body);
  expect(first.body.content).toEqual([{ type: 'text', text: 'Once.' }]);
  const res = await api.post(MESSAGES, body);
  expect(res.status).toBe(422);
  expect(res.body).toEqual({ type: 'error', error: { type: 'no_matching_answer', code: 'no_matching_answer', message: expect.any(String), request_id: res.headers['x-request-id'] } });
  expect(res.body.error.message).toContain(`'once' (fits last_user; used up (1 calls))`);
});

it('answers a call a rule fits, and one the header names, as without strict answers', async () => {
  const fitting = await api.post(CHAT, { model: 'svc-text-pro', messages: [{ role: 'user', content: 'weather?' }] });
  expect(fitting.body.choices[0].message.content).toBe('Sunny.');
  const named = await api.post(CHAT, { model: 'svc-text-pro', messages: [{ role: 'user', content: 'anything' }] }, { 'X-Emulator-Scenario': 'text-long' });
  expect(named.status).toBe(200);
  expect(named.body.usage.completion_tokens).toBe(500);
});

it('refuses a call whose fixed answer does not fit its response_format schema, naming the scenario and the mismatch', async () => {
  const schema = { type: 'object', properties: { title: { type: 'string' } }, required: ['title'] };
  const res = await api.post(CHAT, { model: 'svc-text-pro', messages: [{ role: 'user', content: 'sum up' }], response_format: { type: 'json_schema', json_schema: { name: 'doc', schema } } });
  expect(res.status).toBe(422);
  expect(res.body.error.code).toBe('no_matching_answer');
  expect(res.body.error.message).toBe(
    "The answer of scenario 'summary' does not fit this call (text answers are strict): the json answer does not fit the request's response_format schema 'doc': /title must be string.",
  );
  expect(await ledgerOf(res.headers['x-request-id'] as string)).toEqual([]);
});
