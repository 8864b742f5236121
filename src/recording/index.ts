export { readRecording, RecordingError } from './read.ts';
export type { Recording } from './read.ts';
export { harHeader } from './har.ts';
export type { Har, HarEntry, HarEntryExtra, HarNameValue, HarPage, HarRequest, HarResponse } from './har.ts';
export { createRecorder } from './recorder.ts';
export type { Recorder, RecorderOptions } from './recorder.ts';
export { harEntry } from './entry.ts';
export type { RecordedEntry } from './entry.ts';
export { isSecretHeader, REDACTED, redactSecrets } from '../wire/index.ts';
export { redactBody, redactHeaders, redactSse, redactTaskInput, redactTextJson, xOut } from './redact.ts';
export { importTasks, importTextCalls, recordedTaskScenario, recordedTextScenario, scenarioFileText } from './import.ts';
// The redaction's marks, which parity reads to mask what the recording left out.
export { redactedEntry, redactedText } from './recorded-content.ts';
export type { Imported, ScenarioEntry, Skipped, TextMatchMode } from './import.ts';
export { ensureFolder } from './folder.ts';
