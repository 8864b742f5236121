import { ApiError } from '../../errors/index.ts';
import type { DeliveryFilter, DeliveryOrder, StoredDelivery } from '../../webhooks/index.ts';
import type { ControlDeps } from './deps.ts';
import { pageOf } from './pages.ts';
import type { ListPage, PageQuery } from './pages.ts';
import { deliveryView } from './views.ts';

export interface DeliveryListQuery extends PageQuery {
  task_id?: string;
  account?: string;
  status?: StoredDelivery['status'];
  order?: DeliveryOrder;
}

/** Callback messages: listed, resent, and a test message to an account's address. @see reference "Events" */
export function callbacksControl({ db, webhooks }: Pick<ControlDeps, 'db' | 'webhooks'>) {
  const view = (delivery: StoredDelivery): Record<string, unknown> => deliveryView(delivery, db.accounts.get(delivery.account_id));
  return {
    /** Without a limit, every message of the filter (as the listing has always been). */
    list(query: DeliveryListQuery = {}): ListPage<Record<string, unknown>> {
      const filter: DeliveryFilter = {
        ...(query.task_id !== undefined ? { taskId: query.task_id } : {}),
        ...(query.account !== undefined ? { accountId: query.account } : {}),
        ...(query.status !== undefined ? { status: query.status } : {}),
      };
      return pageOf(query, (limit, offset) => db.deliveries.list(filter, limit, offset, query.order), view);
    },
    get(id: string): Record<string, unknown> {
      const delivery = db.deliveries.get(id);
      if (!delivery) throw new ApiError('not_found', `No callback message '${id}'.`);
      return view(delivery);
    },
    resend: async (id: string): Promise<Record<string, unknown>> => view(await webhooks.resend(id)),
    /** A `webhook.test` message to the account's address, sent now. */
    test: async (accountId: string): Promise<Record<string, unknown>> => view(await webhooks.sendTest(accountId)),
  };
}
