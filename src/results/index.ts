export { notesText } from './notes-text.ts';
export { avatarVideoSize, videoSize } from './video-output.ts';
export { renderMedia } from './media/index.ts';
export type { GeneratedMedia } from './media/index.ts';
