import type { Request } from 'express';
import type { Contract } from '../contract/index.ts';
import { knownOf } from '../service/index.ts';
import type { PageQuery } from '../service/index.ts';
import { requireObjectBody } from './json-body.ts';

/** A control API operation's query, checked by the contract (coerced, defaulted, or 422). */
export const adminQuery = (contract: Contract, operation: string, req: Request): Record<string, unknown> =>
  contract.parameters(operation, 'query', req.query as Record<string, unknown>, 'admin');

/** The paging part of a listing's query: page, limit (none: every row) and the row versions the client holds. */
export const pageQueryOf = (query: Record<string, unknown>): PageQuery => ({
  page: Number(query['page']),
  limit: query['limit'] === undefined ? null : Number(query['limit']),
  known: knownOf(query['known']),
});

/** A body the operation may go without: absent is `{}`. */
export const optionalBody = (req: Request): Record<string, unknown> => (req.body === undefined ? {} : requireObjectBody(req));
