import type { Admission } from '../../keys/index.ts';
import type { ApiDeps, Caller } from './deps.ts';

/** The caller's quota and concurrency caps, read as of now (inside the transaction that admits the work). */
export const admissionOf = (deps: Pick<ApiDeps, 'clock' | 'concurrency' | 'db'>, caller: Caller): Admission => ({
  key: caller.key,
  account: caller.account,
  concurrency: deps.concurrency,
  nowMs: deps.clock.now(),
  db: deps.db,
});
