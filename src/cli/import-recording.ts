import { existsSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { Imported, TextMatchMode } from '../recording/index.ts';
import { HelpRequested, parseCommandArgs, UsageError } from './args.ts';
import { IMPORT_RECORDING_HELP } from './help.ts';
import { prepareFolder } from './report-path.ts';
import { plural } from '../log/index.ts';

export interface ImportRecordingOptions {
  /** The recording: a folder of .har files, or one. */
  recording: string;
  out: string;
  /** How recorded text answers are matched: the whole request (its fingerprint, the default), or its last user message. */
  match?: TextMatchMode;
}

export function parseImportRecordingOptions(argv: string[]): ImportRecordingOptions {
  const { values, positionals } = parseCommandArgs('import-recording', argv, { out: { type: 'string' }, match: { type: 'string' }, help: { type: 'boolean', short: 'h' } }, true);
  if (values.help) throw new HelpRequested(IMPORT_RECORDING_HELP);
  const [recording, ...more] = positionals;
  if (recording === undefined || recording === '') {
    throw new UsageError(`svc-emulator import-recording: DIR is required (a folder of .har files, or one .har file)\n\n${IMPORT_RECORDING_HELP}`);
  }
  if (more.length > 0) throw new UsageError(`svc-emulator import-recording: one recording at a time (also given: ${more.join(' ')})`);
  if (values.out === '') throw new UsageError('svc-emulator import-recording: --out needs a folder');
  const match = values.match ?? 'request';
  if (match !== 'request' && match !== 'last-user') throw new UsageError(`svc-emulator import-recording: --match must be request or last-user (got ${match})`);
  const folder = existsSync(recording) && statSync(recording).isFile() ? dirname(recording) : recording;
  return { recording, out: values.out ?? join(folder, 'scenarios'), match };
}


/**
 * `svc-emulator import-recording`: reads the recording, writes the scenario files (checked against the Scenario
 * schema, as a start would check them) and prints the summary. A missing or unreadable recording, or an --out
 * that cannot be written, is a usage error: one line, exit 2.
 */
export async function importRecording(options: ImportRecordingOptions): Promise<void> {
  const [{ importTasks, importTextCalls, readRecording, RecordingError, scenarioFileText }, { createContract, parseYaml }, { checkScenarios }] = await Promise.all([
    import('../recording/index.ts'),
    import('../contract/index.ts'),
    import('../scenarios/index.ts'),
  ]);
  let recording;
  try {
    recording = readRecording(options.recording);
  } catch (err) {
    if (err instanceof RecordingError) throw new UsageError(`svc-emulator import-recording: ${err.message}`);
    throw err;
  }
  const tasks = importTasks(recording);
  const match = options.match ?? 'request';
  const texts = importTextCalls(recording, match);
  const from = recording.files.map((file) => basename(file)).join(', ');
  const files: { name: string; text: string }[] = [];
  if (tasks.scenarios.length > 0) {
    const kept = tasks.scenarios.length - tasks.redacted;
    files.push({
      name: 'recorded-tasks.yaml',
      text: scenarioFileText(
        [
          `Recorded tasks, imported by svc-emulator import-recording from ${from}.`,
          'Choose one with the header X-Emulator-Scenario: recorded-<task id, lower case> on POST /v1/tasks.',
          ...(tasks.redacted > 0
            ? [`${plural(tasks.redacted, 'task')} of this file ${tasks.redacted === 1 ? 'was' : 'were'} recorded without --keep-content: no match rule (the inputs are not`, 'in the recording); they are chosen by name only.']
            : []),
          ...(kept > 0 ? ['A task with a match rule is also chosen by a submission with the same model and input values.'] : []),
          'Times are the task objects\' created_at, started_at and finished_at (when an answer first showed them, without).',
        ].join('\n'),
        tasks.scenarios,
      ),
    });
  }
  if (texts.scenarios.length > 0) {
    files.push({
      name: 'recorded-text.yaml',
      text: scenarioFileText(
        [
          `Recorded text answers, imported by svc-emulator import-recording from ${from}.`,
          ...(match === 'request'
            ? ['Each answers the same request (match.text_request: its fingerprint; streamed or not, any key order) with the']
            : ['Each answers a call of the same format and model whose last user message is the recorded one, whatever', 'else the request says (match.last_user), with the']),
          'recorded chunks, usage and pacing.',
          ...(texts.redacted > 0 ? [`${plural(texts.redacted, 'answer')} recorded without --keep-content replay xxx text with the recorded chunking and timing.`] : []),
        ].join('\n'),
        texts.scenarios,
      ),
    });
  }
  // What a start would refuse is never written: each file is read back and checked against the Scenario schema.
  const contract = createContract();
  for (const file of files) {
    try {
      checkScenarios(contract, parseYaml(file.text));
    } catch (err) {
      // A recording this import cannot turn into a valid file is a fault of the import: said in one line, nothing written.
      throw new UsageError(`svc-emulator import-recording: ${file.name} would not load (${(err as Error).message}); nothing written`);
    }
  }
  if (files.length > 0) {
    // Made only when there is something to write: an import that finds nothing leaves no empty folder.
    prepareFolder('import-recording', '--out', options.out);
    try {
      for (const file of files) writeFileSync(join(options.out, file.name), file.text);
    } catch (err) {
      throw new UsageError(`svc-emulator import-recording: --out ${options.out}: cannot write there (${(err as Error).message})`);
    }
  }
  for (const line of summary(options.out, tasks, texts, files.map((f) => f.name))) console.log(line);
}

function summary(out: string, tasks: Imported, texts: Imported, written: string[]): string[] {
  const reasons = (skipped: Imported['skipped']): string => {
    const counts = new Map<string, number>();
    for (const s of skipped) counts.set(s.reason, (counts.get(s.reason) ?? 0) + 1);
    return [...counts].map(([reason, n]) => `${reason} (${n})`).join(', ');
  };
  const lines = [
    `imported ${plural(tasks.scenarios.length, 'task')}${tasks.scenarios.length > 0 ? `: ${tasks.scenarios.map((s) => s.name).join(', ')}` : ''}`,
    `imported ${plural(texts.scenarios.length, 'text call')}`,
  ];
  if (tasks.skipped.length > 0) lines.push(`skipped ${plural(tasks.skipped.length, 'task')}: ${reasons(tasks.skipped)}`);
  if (texts.skipped.length > 0) lines.push(`skipped ${plural(texts.skipped.length, 'text call')}: ${reasons(texts.skipped)}`);
  if (tasks.redacted > 0) {
    lines.push(`warning: ${plural(tasks.redacted, 'task')} recorded without --keep-content: no match rules, choose them with X-Emulator-Scenario: recorded-<task id>`);
  }
  if (texts.redacted > 0) {
    lines.push(`warning: ${plural(texts.redacted, 'text answer')} recorded without --keep-content: they replay xxx text with the recorded chunking and timing`);
  }
  if (written.length === 0) {
    lines.push('nothing to write: no finished task and no text answer to replay in the recording');
    return lines;
  }
  lines.push(`wrote ${written.map((name) => join(out, name)).join(', ')}`);
  lines.push(`start the emulator with them: svc-emulator start --scenarios ${out}`);
  return lines;
}
