import { availableParallelism, loadavg } from 'node:os';

/**
 * How many times busier than its cores the machine is (1 on a quiet one, at most 5): the factor by which the
 * suite's time limits grow (vitest.config.ts, runCommand's kill), so a busy machine makes a test slower, never failed.
 */
export const busier = Math.min(5, Math.max(1, Math.round((loadavg()[0] ?? 0) / availableParallelism())));
