export { createClock, machineNow } from './clock.ts';
export type { Clock, ClockMode, ClockOptions, Job, Cancel } from './clock.ts';
export { formatTime, compactTime, parseTime } from './time-format.ts';
export { inTurns } from './in-turns.ts';
