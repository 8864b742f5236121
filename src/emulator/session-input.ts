import { ApiError } from '../errors/index.ts';
import { ids } from '../random/index.ts';
import type { Random } from '../random/index.ts';
import type { NewSession } from '../sessions/index.ts';
import { webhookAddressProblemResolved } from '../webhooks/index.ts';
import type { Host } from './host.ts';

/**
 * A creation body past its schema (CreateSessionRequest), for what the schema cannot say: a session is filled by
 * a state document or by accounts, not both; a callback address passes the internal-address guard before it is
 * stored, as an account's own does.
 */
export async function checkNewSession(host: Host, input: NewSession): Promise<NewSession> {
  const checked = host.contract.body<NewSession>('admin', 'CreateSessionRequest', input);
  if (checked.state && checked.accounts) {
    throw new ApiError('invalid_params', 'Give a session a state document or accounts, not both.', [{ field: 'accounts', message: 'cannot be given with state' }]);
  }
  if (checked.clock?.speed !== undefined && checked.clock.mode === 'manual') {
    throw new ApiError('invalid_params', 'A manual clock has no speed.', [{ field: 'clock.speed', message: 'is for the real clock only' }]);
  }
  for (const [index, account] of (checked.accounts ?? []).entries()) {
    if (!account.webhook_url) continue;
    const field = `accounts[${index}].webhook_url`;
    const problem = await webhookAddressProblemResolved(account.webhook_url, host.config.allowInsecureWebhooks, host.resolveHost);
    if (problem) throw new ApiError('invalid_params', `${field} ${problem}`, [{ field, message: problem }]);
  }
  return checked;
}

/** A new session's id (`ses_` + 24 lowercase letters or digits) and admin token, from the unseeded source. */
export function sessionIds(random: Random, taken: (id: string) => boolean): { id: string; token: string } {
  let id: string;
  do id = `ses_${random.string(24, 'abcdefghijklmnopqrstuvwxyz0123456789')}`;
  while (taken(id));
  return { id, token: ids.adminToken(random) };
}
