import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { derived, hashOf } from '../cache/derived.ts';
import { parseYaml } from '../contract/index.ts';
import type { Contract } from '../contract/index.ts';
import { ApiError } from '../errors/index.ts';
import type { Scenario } from './types.ts';

export const SCENARIOS_DIR = new URL('../../scenarios/', import.meta.url).pathname;

/** A scenario file that cannot be used; the message names the file and the field. */
export class ScenarioFileError extends Error {}

/**
 * Checks a scenario document (a file's content or a control API body) against the ScenarioFile schema of
 * openapi/admin.yaml, filling defaults. Throws 422 invalid_params naming each bad field.
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
  return checked.scenarios;
}

/** Reads every `*.yaml`, `*.yml` and `*.json` file of a folder, in name order. A bad file stops the start. */
export function loadScenarioFiles(contract: Contract, dir: string = SCENARIOS_DIR): Scenario[] {
  const files = readdirSync(dir)
    .filter((name) => /\.(ya?ml|json)$/.test(name))
    .sort();
  const all: Scenario[] = [];
  const definedIn = new Map<string, string>();
  for (const name of files) {
    const path = join(dir, name);
    let scenarios: Scenario[];
    try {
      const text = readFileSync(path, 'utf8');
      // A file checked once against the same document is not parsed and checked again at the next start.
      scenarios = derived('scenarios', hashOf(text, contract.fingerprint), () => checkScenarios(contract, parseYaml(text)));
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
      all.push(scenario);
    });
  }
  if (!all.some((s) => s.name === 'default')) throw new ScenarioFileError(`${dir}: no scenario named 'default'`);
  return all;
}
