export { createRandom, pick } from './source.ts';
export type { Random } from './source.ts';
export * as ids from './ids.ts';
