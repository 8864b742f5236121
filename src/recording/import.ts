/**
 * A recording turned into scenarios the emulator replays (`svc-emulator import-recording`): one per recorded task,
 * with the times, ending and output shapes its answers showed, and one per distinct recorded text answer, with its
 * chunks, usage and pacing. Pure: the command reads the recording and writes the files.
 */
export { importTasks } from './import-tasks.ts';
export { importTextCalls } from './import-text.ts';
export type { TextMatchMode } from './text-match-rule.ts';
export { recordedTaskScenario, recordedTextScenario, scenarioFileText } from './scenario-file.ts';
export type { Imported, ScenarioEntry, Skipped } from './scenario-file.ts';
