export { readRecording, RecordingError } from './read.ts';
export type { Recording } from './read.ts';
export { harHeader } from './har.ts';
export type { Har, HarEntry, HarEntryExtra, HarNameValue, HarPage, HarRequest, HarResponse } from './har.ts';
