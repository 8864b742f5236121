import type { CheckInfo, Deviation, ListPageObservation } from './history.ts';
import { idsOf, named } from './task-view.ts';

export const PAGING_CHECKS = {
  fullPage: {
    id: 'tasks.list.full-page',
    holds: 'a page with has_more true holds `limit` items, no fewer: the limit sent, or 20 when none is (the default page size)',
  },
} as const satisfies Record<string, CheckInfo>;

/**
 * Pages are `limit` tasks at a time ("limit: page size, default 20"; "when has_more is true, request page + 1"): a
 * page that says more follow but holds fewer is cut to another size. The observer takes a page without `limit` as
 * the default's 20, so a default of another size shows here.
 * @see reference "GET /v1/tasks (list)", "Limits": List page size
 */
export function checkPaging(pages: readonly ListPageObservation[]): Deviation[] {
  return pages
    .filter((page) => page.has_more && page.items.length < page.query.limit)
    .map((page) => ({
      check: PAGING_CHECKS.fullPage.id,
      message: `page ${page.query.page} (${named(page)}) holds ${page.items.length} items and has_more, its limit is ${page.query.limit}`,
      requestIds: idsOf(page),
    }));
}
