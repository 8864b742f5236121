export { derived, hashOf } from './derived.ts';
