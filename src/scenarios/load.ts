import { readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { derived, hashOf } from '../cache/index.ts';
import { parseYaml } from '../contract/index.ts';
import type { Contract } from '../contract/index.ts';
import { ApiError } from '../errors/index.ts';
import { textRuleProblems } from './text-rules.ts';
import type { Scenario } from './types.ts';

/** The built-in scenarios: the package's `scenarios/` folder. */
export const SCENARIOS_DIR = new URL('../../scenarios/', import.meta.url).pathname;

/** The version of the checks beyond the schema (`textRuleProblems`): a change to them must check every file again. */
const RULES_VERSION = 'text-rules-1';

/** A scenario file that cannot be used; the message names the file and the field. */
export class ScenarioFileError extends Error {}

/** The scenarios of the start-up library, and which of the user's took the name of a built-in one. */
export interface ScenarioLibrary {
  scenarios: Scenario[];
  replaced: { name: string; file: string }[];
}

/**
 * Checks a scenario document (a file's content or a control API body) against the ScenarioFile schema of
 * openapi/admin.yaml, filling defaults, then for the rules the schema cannot state (`textRuleProblems`: a rule no
 * call could fit, a regex that is not one). Throws 422 invalid_params naming each bad field, whose message is the
 * problems on one line.
 */
export function checkScenarios(contract: Contract, document: unknown): Scenario[] {
  const checked = contract.body<{ scenarios: Scenario[] }>('admin', 'ScenarioFile', document);
  const seen = new Set<string>();
  checked.scenarios.forEach((scenario, i) => {
    if (seen.has(scenario.name)) {
      throw new ApiError('invalid_params', `scenario name '${scenario.name}' is used twice`, [
        { field: `scenarios[${i}].name`, message: `'${scenario.name}' is used twice` },
      ]);
    }
    seen.add(scenario.name);
  });
  const problems = textRuleProblems(checked.scenarios, new Set(contract.taskModels.keys()));
  if (problems.length > 0) throw new ApiError('invalid_params', problems.map((p) => `${p.field} ${p.message}`).join('; '), problems);
  return checked.scenarios;
}

/**
 * The built-in scenarios with the user's added (`added`: a folder of files, or one file). The user's come first,
 * so their match rules are tried first; one with a built-in's name replaces it. A bad file stops the start.
 */
export function loadScenarioLibrary(contract: Contract, added?: string): ScenarioLibrary {
  const builtInFiles = scenarioFilesOf(SCENARIOS_DIR);
  const builtIn = readScenarioFiles(contract, builtInFiles);
  // The package's own folder (or one of its files) named again adds nothing and replaces nothing.
  const own = new Set(builtInFiles.map((file) => realpathSync(file)));
  const user = added === undefined ? [] : readScenarioFiles(contract, scenarioFilesOf(added).filter((file) => !own.has(realpathSync(file))));
  const names = new Set(user.map((s) => s.scenario.name));
  const scenarios = [...user, ...builtIn.filter((s) => !names.has(s.scenario.name))].map((s) => s.scenario);
  if (!scenarios.some((s) => s.name === 'default')) throw new ScenarioFileError(`${added ?? SCENARIOS_DIR}: no scenario named 'default'`);
  const builtInNames = new Set(builtIn.map((s) => s.scenario.name));
  return {
    scenarios,
    replaced: user.filter((s) => builtInNames.has(s.scenario.name)).map((s) => ({ name: s.scenario.name, file: s.file })),
  };
}

/** The scenario files of a path: every `*.yaml`, `*.yml` and `*.json` of a folder in name order, or the file itself. */
function scenarioFilesOf(path: string): string[] {
  let folder: boolean;
  try {
    folder = statSync(path).isDirectory();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new ScenarioFileError(`${path}: ${code === 'ENOENT' ? 'no such file or folder' : (err as Error).message}`);
  }
  if (!folder) return [path];
  return readdirSync(path)
    .filter((name) => /\.(ya?ml|json)$/.test(name))
    .sort()
    .map((name) => join(path, name));
}

/** Reads scenario files in order; a name may be defined once across them. */
function readScenarioFiles(contract: Contract, files: string[]): { scenario: Scenario; file: string }[] {
  const all: { scenario: Scenario; file: string }[] = [];
  const definedIn = new Map<string, string>();
  for (const path of files) {
    let scenarios: Scenario[];
    try {
      const text = readFileSync(path, 'utf8');
      // A file checked once against the same document (and the same rules beyond it) is not parsed and checked
      // again at the next start.
      scenarios = derived('scenarios', hashOf(text, contract.fingerprint, RULES_VERSION), () => checkScenarios(contract, parseYaml(text)));
    } catch (err) {
      const details =
        err instanceof ApiError && err.details
          ? err.details.map((d) => `${d.field || 'the document'} ${d.message}${d.field ? '' : ' (a mapping with a scenarios list)'}`)
          : [];
      throw new ScenarioFileError(`${path}: ${details.length > 0 ? details.join('; ') : (err as Error).message}`);
    }
    scenarios.forEach((scenario, i) => {
      const other = definedIn.get(scenario.name);
      if (other) throw new ScenarioFileError(`${path}: scenarios[${i}].name '${scenario.name}' is already defined by ${other}`);
      definedIn.set(scenario.name, path);
      all.push({ scenario, file: path });
    });
  }
  return all;
}
