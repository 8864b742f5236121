import type { CallFilter, CallRecord } from '../../calls/index.ts';
import { ApiError } from '../../errors/index.ts';
import type { ControlDeps } from './deps.ts';
import { pageOf } from './pages.ts';
import type { ListPage, PageQuery } from './pages.ts';

export type RecordListQuery = PageQuery & CallFilter;

/** Call records of /v1 requests: by request id, or listed newest first with filters and pages. */
export function recordsControl({ db }: Pick<ControlDeps, 'db'>) {
  return {
    list(query: RecordListQuery = {}): ListPage<CallRecord> {
      const { page: _page, limit: _limit, known: _known, ...filter } = query;
      return pageOf(query, (limit, offset) => db.calls.page(filter, limit, offset), (row) => row);
    },
    get(id: string): CallRecord {
      const call = db.calls.get(id);
      if (!call) throw new ApiError('not_found', `No call record '${id}'.`);
      return call;
    },
  };
}
