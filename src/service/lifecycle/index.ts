export { lifecycleOf } from './parts.ts';
export type { Lifecycle, Part } from './parts.ts';
export { releaseWhenTaskEnds, stampClockOnCommit } from './rules.ts';
