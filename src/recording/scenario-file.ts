import { yamlModule } from '../contract/index.ts';
import type { Scenario } from '../scenarios/index.ts';

/**
 * What import-recording writes: the scenarios as the files give them, their names (parity names the same ones on
 * a replayed submission) and the YAML text of a file.
 */

/** A scenario as a file gives it: what the schema fills in by default left out. */
export type ScenarioEntry = Pick<Scenario, 'name' | 'outcome'> & Partial<Scenario>;

/** What gave no scenario, and why: the summary counts the reasons. */
export interface Skipped {
  what: 'task' | 'text call';
  id: string;
  reason: string;
}

export interface Imported {
  scenarios: ScenarioEntry[];
  skipped: Skipped[];
  /** How many of the scenarios come from redacted exchanges (a recording made without --keep-content). */
  redacted: number;
}

/** The Scenario schema's limit on a description (openapi/admin.yaml). */
const MAX_DESCRIPTION = 1000;

/** A description within the schema's length, however long the recorded model name or id. */
export const described = (text: string): string => (text.length <= MAX_DESCRIPTION ? text : `${text.slice(0, MAX_DESCRIPTION - 1)}…`);

/** A name the Scenario schema takes (lower case): `recorded-t251124223431abc123`. */
const scenarioName = (prefix: string, id: string): string => `${prefix}${id.toLowerCase().replace(/[^a-z0-9_.-]/g, '-')}`.slice(0, 64);

/** The scenario import-recording makes of a recorded task (parity names it on the task's replayed submission). */
export const recordedTaskScenario = (taskId: string): string => scenarioName('recorded-', taskId);

/** The scenario import-recording makes of a recorded text call, by its request's fingerprint. */
export const recordedTextScenario = (fingerprint: string): string => scenarioName('recorded-text-', fingerprint.slice('sha256:'.length, 'sha256:'.length + 12));

/** A scenario file's text: a comment at the top, then the scenarios (YAML, as `scenarios/*.yaml`). */
export function scenarioFileText(comment: string, scenarios: ScenarioEntry[]): string {
  const document = new (yamlModule().Document)({ scenarios }, { aliasDuplicateObjects: false });
  document.commentBefore = comment
    .split('\n')
    .map((line) => (line === '' ? '' : ` ${line}`))
    .join('\n');
  // Chunks with line breaks or edge spaces stay one quoted line each, as they were on the wire.
  return document.toString({ lineWidth: 0, blockQuote: false });
}
