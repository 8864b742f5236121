import type { Check } from '../types.ts';
import { callbackRetryChecks } from './callback-retries.ts';
import { callbackChecks } from './callbacks.ts';
import { fileChecks } from './files.ts';
import { lifecycleChecks } from './lifecycle.ts';
import { limitChecks } from './limits.ts';
import { taskEndChecks } from './task-ends.ts';
import { taskChecks } from './tasks.ts';
import { textChecks } from './text.ts';
import { validationChecks } from './validation.ts';
import { wireChecks } from './wire.ts';

/**
 * Every check, in the order they run. The `exercise.*` checks set up what the others never meet (a failed or
 * timed-out task, a cancel while processing, an upload, each limit, a callback retry); those that need the
 * control API for it say so and are skipped without it.
 */
export const ALL_CHECKS: Check[] = [
  ...wireChecks,
  ...validationChecks,
  ...taskChecks,
  ...taskEndChecks,
  ...lifecycleChecks,
  ...textChecks,
  ...fileChecks,
  ...limitChecks,
  ...callbackChecks,
  ...callbackRetryChecks,
];
