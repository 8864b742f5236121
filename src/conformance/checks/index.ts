import type { Check } from '../types.ts';
import { callbackChecks } from './callbacks.ts';
import { lifecycleChecks } from './lifecycle.ts';
import { taskChecks } from './tasks.ts';
import { textChecks } from './text.ts';
import { validationChecks } from './validation.ts';
import { wireChecks } from './wire.ts';

/** Every check, in the order they run. */
export const ALL_CHECKS: Check[] = [...wireChecks, ...validationChecks, ...taskChecks, ...lifecycleChecks, ...textChecks, ...callbackChecks];
export { textModel } from './text.ts';
