import type { Check } from '../types.ts';
import { callbackRetryChecks } from './callback-retries.ts';
import { callbackDetailChecks } from './callback-details.ts';
import { callbackChecks } from './callbacks.ts';
import { callbackScheduleChecks } from './callback-schedule.ts';
import { consequenceChecks } from './consequences.ts';
import { fileChecks } from './files.ts';
import { inputChecks } from './inputs.ts';
import { lifecycleChecks } from './lifecycle.ts';
import { limitChecks } from './limits.ts';
import { listChecks } from './lists.ts';
import { priceChecks } from './prices.ts';
import { resultChecks } from './results.ts';
import { taskEndChecks } from './task-ends.ts';
import { taskChecks } from './tasks.ts';
import { streamChecks } from './streams.ts';
import { textChecks } from './text.ts';
import { uploadChecks } from './uploads.ts';
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
  ...streamChecks,
  ...fileChecks,
  ...uploadChecks,
  ...priceChecks,
  ...inputChecks,
  ...resultChecks,
  ...listChecks,
  ...limitChecks,
  ...callbackChecks,
  ...callbackRetryChecks,
  ...callbackDetailChecks,
  ...callbackScheduleChecks,
  ...consequenceChecks,
];
