export { renderMedia, MAX_LONG_SIDE, MAX_SHORT_SIDE } from './render.ts';
export type { GeneratedMedia } from './render.ts';
export { AIGC_KEY, AIGC_XMP_NAMESPACE, EMULATOR_PRODUCER } from './aigc.ts';
export type { AigcLabel } from './aigc.ts';
