export { notesText } from './notes-text.ts';
export { videoSize } from './video-output.ts';
