import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { UsageError } from '../../src/cli/args.ts';
import { parseReceiveOptions } from '../../src/cli/receive.ts';
import { newAccount, socialNote, startEmulator } from '../support/harness.ts';
import type { TestEmulator } from '../support/harness.ts';
import { cliBin } from '../support/cli-build.ts';

// `svc-emulator receive`, the command, against an emulator in-process. One receiver serves the file: told to fail
// the first two attempts of each message, with the signing secret of the account that calls it back. Each test
// reads only the lines printed since it began (the receiver counts attempts per message id).

let child: ChildProcess | undefined;
let t: TestEmulator;
let account: { id: string; key: string };
let rx: { url: string; lines: () => string[] };
beforeAll(async () => {
  t = await startEmulator({ allowInsecureWebhooks: true });
  account = await newAccount(t);
  const secret = (await t.admin.get(`/_emulator/accounts/${account.id}`)).body.webhook_secret as string;
  rx = await receiver(['--secret', secret, '--fail-first', '2']);
});
afterAll(async () => {
  child?.kill('SIGKILL');
  await t?.close();
});

/** Starts `svc-emulator receive`; `lines()` is everything it printed after its address. */
async function receiver(args: string[]): Promise<{ url: string; lines: () => string[] }> {
  const proc = spawn(process.execPath, [cliBin(), 'receive', '--port', '0', ...args], { stdio: 'pipe' });
  child = proc;
  let out = '';
  proc.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    proc.stdout.on('data', () => {
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (match?.[1]) resolve(match[1]);
    });
    proc.once('exit', (code) => reject(new Error(`receive exited ${code}: ${out}`)));
  });
  return { url, lines: () => out.split('\n').filter((l) => l && !l.includes('listening on')) };
}

/** The lines the receiver prints from now on. */
function linesFromNow(): () => string[] {
  const from = rx.lines().length;
  return () => rx.lines().slice(from);
}

it('verifies, fails the first N attempts as told, accepts, and marks a resend as a duplicate', async () => {
  const lines = linesFromNow();
  await t.admin.post(`/_emulator/accounts/${account.id}/webhook`, { url: rx.url });
  const { id } = (await t.as(account.key).post('/v1/tasks', socialNote(), { 'X-Emulator-Scenario': 'instant' })).body;
  await t.admin.post('/_emulator/clock/advance', { seconds: 0 });
  await t.admin.post('/_emulator/clock/advance', { seconds: 360 });
  const [delivery] = (await t.admin.get(`/_emulator/webhooks/deliveries?task_id=${id}`)).body.data;
  expect(delivery.attempts.map((a: { status_code: number }) => a.status_code)).toEqual([500, 500, 200]);
  await t.admin.post(`/_emulator/webhooks/deliveries/${delivery.id}/resend`);
  // The receiver prints each line before it answers, but its output reaches this process through a pipe, which
  // may be read after the answer: wait for the lines rather than race them.
  await expect.poll(lines, { timeout: 10_000 }).toEqual([
    `failing ${delivery.id} task.succeeded ${id} attempt 1 (told to fail the first 2)`,
    `failing ${delivery.id} task.succeeded ${id} attempt 2 (told to fail the first 2)`,
    `accepted ${delivery.id} task.succeeded ${id} attempt 3`,
    `duplicate ${delivery.id} task.succeeded ${id} attempt 4, already handled`,
  ]);
});

it('rejects a callback whose signature does not verify, with 401', async () => {
  const lines = linesFromNow();
  const res = await fetch(rx.url, {
    method: 'POST',
    headers: {
      'webhook-id': 'msg_forged',
      'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
      'webhook-signature': 'v1,AAAA',
    },
    body: '{"type":"task.succeeded"}',
  });
  expect(res.status).toBe(401);
  // Printed before the answer went out, read from the pipe maybe after it.
  await expect.poll(lines, { timeout: 10_000 }).toEqual([expect.stringMatching(/^rejected msg_forged - - /)]);
});

it('refuses to start without a whsec_ secret: a usage error (one line, exit 2: test/cli/options.test.ts runs those through the command)', () => {
  expect(() => parseReceiveOptions(['--port', '0'], {})).toThrow(UsageError);
  expect(() => parseReceiveOptions(['--port', '0'], {})).toThrow('svc-emulator receive: --secret whsec_... is required (or SVC_EMULATOR_WEBHOOK_SECRET)');
});

it('answers a plain GET (no webhook headers) as a health check: 200, logged as health, not as a rejected delivery', async () => {
  const lines = linesFromNow();
  const answer = await fetch(rx.url);
  expect(answer.status).toBe(200);
  expect(await answer.text()).toBe('health');
  // A POST without the headers is still a delivery that fails verification.
  expect((await fetch(`${rx.url}hooks`, { method: 'POST', body: '{}' })).status).toBe(401);
  await expect.poll(() => lines().length).toBe(2);
  expect(lines()[0]).toMatch(/^health - - - \/ answered, the receiver is up$/);
  expect(lines()[1]).toMatch(/^rejected - - - /);
});
