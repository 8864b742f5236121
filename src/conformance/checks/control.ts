import { CheckFailure } from '../client.ts';
import { createClient } from '../client.ts';
import type { Client } from '../client.ts';
import { accountWithKey, controlRequest } from '../setup.ts';
import type { Admin, KeySettings } from '../setup.ts';
import type { CheckContext } from '../types.ts';

/** The control API, for a check that needs it (`needs: ['admin']`, so the suite gives it). */
export function adminOf(ctx: CheckContext): Admin {
  if (!ctx.admin) throw new CheckFailure('no control API', null);
  return ctx.admin;
}

/**
 * A client of a fresh account whose one key has `settings` (a low per-minute rate, a quota, a concurrency cap),
 * made through the control API. Its answers are checked like every other; they are not the suite's account's.
 */
export async function limitedClient(ctx: CheckContext, settings: KeySettings): Promise<Client & { accountId: string }> {
  const { accountId, key } = await accountWithKey(adminOf(ctx), settings);
  return Object.assign(createClient(ctx.api.baseUrl, key, ctx.contract), { accountId });
}

/**
 * Ends a task the check left running (a failure through the control API, so it is refunded and holds no
 * concurrency); a task that already ended is left as it is.
 */
export async function endTask(ctx: CheckContext, id: string): Promise<void> {
  await controlRequest(adminOf(ctx), 'POST', `/_emulator/tasks/${encodeURIComponent(id)}/fail`, { code: 'generation_failed', message: 'ended by the conformance suite' });
}

/** An account's balances as the control API shows them. */
export async function balancesOf(ctx: CheckContext, accountId: string): Promise<{ available?: string; frozen?: string; charged?: string }> {
  const answer = await controlRequest(adminOf(ctx), 'GET', `/_emulator/accounts/${encodeURIComponent(accountId)}`);
  return (answer.json ?? {}) as { available?: string; frozen?: string; charged?: string };
}
