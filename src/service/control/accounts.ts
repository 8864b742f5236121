import { createAccount, findAccount } from '../../accounts/index.ts';
import { toPoints } from '../../points/index.ts';
import { ApiError } from '../../errors/index.ts';
import { webhookAddressProblemResolved } from '../../webhooks/index.ts';
import type { ControlDeps } from './deps.ts';
import { pageOf, sliceOf } from './pages.ts';
import type { ListPage, PageQuery } from './pages.ts';
import { accountView } from './views.ts';

export interface NewAccountInput {
  /** Exact decimal; default 100000.000. */
  points?: string;
  webhook_url?: string | null;
}

export interface LedgerQuery {
  /** Entries after this entry number (`n`); with `limit`, a page of the ledger. */
  after?: number;
  limit?: number;
}

/** Accounts, their settings and their ledger. @see openapi/admin.yaml "Accounts" */
export function accountsControl(deps: Pick<ControlDeps, 'clock' | 'db' | 'random' | 'webhooks' | 'resolveHost' | 'config'>) {
  const { db, clock } = deps;
  /** A callback address must pass the internal-address guard, names resolved, before it is stored. */
  const checkAddress = async (field: string, url: string): Promise<void> => {
    const problem = await webhookAddressProblemResolved(url, deps.config.allowInsecureWebhooks, deps.resolveHost);
    if (problem) throw new ApiError('invalid_params', `${field} ${problem}`, [{ field, message: problem }]);
  };
  return {
    async create(input: NewAccountInput = {}): Promise<Record<string, unknown>> {
      if (input.webhook_url) await checkAddress('webhook_url', input.webhook_url);
      const account = db.store.transaction(() =>
        createAccount(db, deps.random, clock.now(), {
          points: toPoints(input.points ?? '100000.000'),
          webhook_url: input.webhook_url ?? null,
        }),
      );
      return accountView(account);
    },
    list: (query: PageQuery = {}): ListPage<Record<string, unknown>> => pageOf(query, sliceOf(db.accounts.all()), accountView),
    get: (id: string): Record<string, unknown> => accountView(findAccount(db, id)),
    /** The account's settings; `concurrency: null` lifts its own cap. */
    update(id: string, patch: { concurrency?: number | null }): Record<string, unknown> {
      const account = db.store.transaction(() => {
        const stored = findAccount(db, id);
        if (patch.concurrency !== undefined) stored.concurrency = patch.concurrency;
        db.accounts.put(stored);
        return stored;
      });
      return accountView(account);
    },
    /** The whole ledger, or a page of it after an entry number. */
    ledger(id: string, query: LedgerQuery = {}) {
      const account = findAccount(db, id);
      if (query.after === undefined && query.limit === undefined) {
        const data = db.ledger.ofAccount(account.id);
        return { object: 'list' as const, data, count: data.length, has_more: false };
      }
      const after = query.after ?? 0;
      const data = db.ledger.page(account.id, { after, limit: query.limit ?? 100 });
      const count = db.ledger.count(account.id);
      return { object: 'list' as const, data, count, has_more: (data.at(-1)?.n ?? after) < count };
    },
    /** Where the account's callbacks go; `null` stops them. */
    async setWebhook(id: string, url: string | null): Promise<Record<string, unknown>> {
      findAccount(db, id);
      if (url !== null) await checkAddress('url', url);
      const account = db.store.transaction(() => {
        const stored = findAccount(db, id);
        stored.webhook_url = url;
        db.accounts.put(stored);
        return stored;
      });
      return accountView(account);
    },
    /** A new signing secret; the previous one stays valid for the rotation overlap. */
    rotateWebhookSecret(id: string): Record<string, unknown> {
      return accountView(db.store.transaction(() => deps.webhooks.rotate(findAccount(db, id))));
    },
  };
}
