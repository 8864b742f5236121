import { judge } from '../../verdict/index.ts';
import type { ClientLogStore, Verdict, VerdictLimits } from '../../verdict/index.ts';
import { ApiError } from '../../errors/index.ts';
import type { ControlDeps } from './deps.ts';

/** What the verdict reads: the log of what clients did and what their receivers answered. */
export interface VerdictDeps {
  clientLog: ClientLogStore;
}

/** Whose behaviour to judge: one key's client, one account's, or (neither) every client since the last reset. */
export interface VerdictFilter {
  key?: string | undefined;
  account?: string | undefined;
}

export interface ProbeRequest {
  account: string;
  /** How old the webhook-timestamp is; default 600 (twice the 5-minute tolerance). */
  stale_seconds?: number;
}

export interface ProbeResponse {
  webhook_id: string;
  url: string;
  /** The receiver's status; null when it did not answer. */
  status: number | null;
}

/**
 * The verdict on how a client coped (`GET /_emulator/verdict`), and the probe that puts its receiver to the
 * stale-timestamp test (`POST /_emulator/verdict/probe`). The checks are the verdict folder's; this only picks the
 * part of the log to judge.
 */
export function verdictControl({ clientLog, webhooks, db }: VerdictDeps & Pick<ControlDeps, 'webhooks' | 'db'>) {
  return {
    /** `limits` replaces documented thresholds for this one verdict (the control API judges with the defaults). */
    judge(filter: VerdictFilter = {}, limits: Partial<VerdictLimits> = {}): Verdict {
      const log = clientLog.select(filter);
      // A key or account this world never held and never saw is not one to judge (another session's, say): 404,
      // as for any id that is not this world's. One since deleted is still judged on what it did.
      const empty = log.requests.length === 0 && log.callbacks.length === 0;
      if (empty && filter.key !== undefined && !db.keys.get(filter.key)) throw new ApiError('not_found', `No key ${filter.key} here.`);
      if (empty && filter.account !== undefined && !db.accounts.get(filter.account)) throw new ApiError('not_found', `No account ${filter.account} here.`);
      return judge(log, limits);
    },
    async probe(request: ProbeRequest): Promise<ProbeResponse> {
      const delivery = await webhooks.probe(request.account, request.stale_seconds);
      const attempt = delivery.attempts[0];
      return { webhook_id: delivery.id, url: delivery.url, status: attempt?.status_code ?? null };
    },
  };
}
