import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { admin, DEMO_KEY, killAll, runCli, startCli } from '../support/cli.ts';

// Text answers on demand through the real command: `start --text-answers strict` refuses a call no scenario
// answers (422 no_matching_answer in the format's error shape, nothing charged, its record saying no rule matched),
// and `start --scenarios` refuses a match key the scenario's kind cannot use, in one line naming the file, the
// scenario and the key, with exit 2.
// @see docs/reference/scenarios.md "Answers on demand"

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-cli-text-answers-'));
});
afterEach(() => killAll());
afterAll(() => rm(dir, { recursive: true, force: true }));

it('start --text-answers strict refuses an unmatched call with 422 no_matching_answer in each format’s shape, charging nothing', async () => {
  const file = join(dir, 'weather.yaml');
  await writeFile(file, ['scenarios:', '  - name: weather', '    outcome: succeeded', '    match: { last_user: { contains: weather } }', '    text: { text: Sunny. }', ''].join('\n'));
  const cli = await startCli(['--memory', '--text-answers', 'strict', '--scenarios', file]);
  const balance = async (): Promise<unknown> => (await (await admin(cli, 'GET', '/_emulator/accounts/acct_demo')).json()) as unknown;
  const before = await balance();
  const post = (path: string, body: unknown, headers: Record<string, string>): Promise<Response> =>
    fetch(`${cli.base}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json', Connection: 'close', ...headers }, body: JSON.stringify(body) });

  const chat = await post('/v1/chat/completions', { model: 'svc-text-pro', messages: [{ role: 'user', content: 'tell me a story' }] }, { Authorization: `Bearer ${DEMO_KEY}` });
  expect(chat.status).toBe(422);
  const chatId = chat.headers.get('x-request-id');
  expect(chatId).toMatch(/^req_[a-z0-9]{24}$/);
  const chatBody = (await chat.json()) as { error: { message: string } };
  expect(chatBody).toEqual({ error: { type: 'no_matching_answer', code: 'no_matching_answer', param: null, request_id: chatId, message: expect.any(String) } });
  expect(chatBody.error.message).toContain(`closest: 'weather' (not last_user)`);

  const messages = await post('/v1/messages', { model: 'svc-text-lite', max_tokens: 16, messages: [{ role: 'user', content: 'hello' }] }, { 'x-api-key': DEMO_KEY, 'anthropic-version': '2023-06-01' });
  expect(messages.status).toBe(422);
  expect(await messages.json()).toEqual({ type: 'error', error: { type: 'no_matching_answer', code: 'no_matching_answer', message: expect.any(String), request_id: messages.headers.get('x-request-id') } });

  // Nothing frozen or charged, and the call's record says no rule matched it.
  expect(await balance()).toEqual(before);
  const ledger = (await (await admin(cli, 'GET', '/_emulator/accounts/acct_demo/ledger')).json()) as { data: { call_id?: string }[] };
  expect(ledger.data.filter((e) => e.call_id === chatId)).toEqual([]);
  const record = (await (await admin(cli, 'GET', `/_emulator/records/${chatId}`)).json()) as Record<string, unknown>;
  expect(record).toMatchObject({ status: 422, error_code: 'no_matching_answer', text_answer: { by: 'unmatched' } });

  // A call the rule fits is answered as ever.
  const fitting = await post('/v1/chat/completions', { model: 'svc-text-pro', messages: [{ role: 'user', content: 'the weather?' }] }, { Authorization: `Bearer ${DEMO_KEY}` });
  expect(fitting.status).toBe(200);
  expect(((await fitting.json()) as { choices: { message: { content: string } }[] }).choices[0]?.message.content).toBe('Sunny.');
});

it.each([
  ['input on a text scenario', 'ask', ['    match: { input: { prompt: { contains: cat } } }', '    text: { text: Hi. }'], "scenarios[0].match.input does not apply to text calls, which have no input, and this scenario has a text block (scenario 'ask')"],
  ['last_user on a task scenario', 'notes', ['    match: { last_user: { contains: cat } }'], "scenarios[0].match.last_user applies to text calls only, and this scenario has no text block (a task scenario); give it one (`text: {}` for the generated answer) (scenario 'notes')"],
])('start --scenarios refuses %s in one line naming the file, the scenario and the key, exit 2', async (_what, name, lines, problem) => {
  const file = join(dir, `${name}.yaml`);
  await writeFile(file, ['scenarios:', `  - name: ${name}`, '    outcome: succeeded', ...lines, ''].join('\n'));
  const run = await runCli(['start', '--port', '0', '--memory', '--scenarios', file]);
  expect(run.code).toBe(2);
  expect(run.stdout).toBe('');
  expect(run.stderr.trimEnd().split('\n')).toEqual([`svc-emulator: bad scenario file: ${file}: ${problem}`]);
});
