import type { Observer } from '../observed/index.ts';
import type { Client } from './client.ts';
import { controlRequest } from './setup.ts';
import type { Admin } from './setup.ts';

/**
 * With the control API the suite can read its account's balance, so the behaviour checks can hold the balance to
 * the task's points: read around a submission, its idempotent replay and its cancel (nothing else of the account
 * moves meanwhile: the suite's account is its own). Errors of the requests are the other checks' to report.
 */
export async function probeBalance(api: Client, observer: Observer, admin: Admin, account: string, timeoutMs: number): Promise<void> {
  const available = async (): Promise<string | null> => {
    const answer = await controlRequest(admin, 'GET', `/_emulator/accounts/${encodeURIComponent(account)}`, undefined, timeoutMs);
    const body = answer.json as { available?: unknown } | undefined;
    return answer.status === 200 && typeof body?.available === 'string' ? body.available : null;
  };
  const around = async (request: () => Promise<unknown>): Promise<void> => {
    const before = await available();
    await request();
    const after = await available();
    const seen = observer.history.tasks?.at(-1);
    if (seen && before !== null && after !== null) seen.balance = { before, after };
  };
  const payload = { model: 'social-notes-data', input: { mode: 'note', note: 'https://notes.example.com/n/balance', agree: true } };
  // Stays queued on the emulator, so the cancel always refunds.
  const headers = { 'X-Emulator-Scenario': 'timeout-in-queue', 'Idempotency-Key': `conformance-balance-${Date.now().toString(36)}` };
  let id: unknown;
  await around(async () => {
    id = ((await api.request('POST', '/v1/tasks', { body: payload, headers, unchecked: true })).json as { id?: unknown } | undefined)?.id;
  });
  if (typeof id !== 'string') return;
  await around(() => api.request('POST', '/v1/tasks', { body: payload, headers, unchecked: true }));
  await around(() => api.request('POST', `/v1/tasks/${id as string}/cancel`, { unchecked: true }));
}
