import type { ScenariosRepo } from './records.ts';
import type { Scenario } from './types.ts';

/**
 * The scenarios in force: those loaded at run time through the control API (kept in the store, newest first)
 * ahead of the start-up library (the user's files, then the built-in ones; see `loadScenarioLibrary`). A loaded
 * scenario with the name of a file scenario replaces it until reset, which brings the start-up library back.
 */
export interface ScenarioRegistry {
  list(): Scenario[];
  get(name: string): Scenario | undefined;
  /** Adds or replaces run-time scenarios. */
  load(scenarios: Scenario[]): void;
}

export function createScenarioRegistry(fromFiles: Scenario[], runtime: ScenariosRepo): ScenarioRegistry {
  const list = (): Scenario[] => {
    const loaded = runtime.all();
    return [...loaded, ...fromFiles.filter((f) => !loaded.some((l) => l.name === f.name))];
  };
  return {
    list,
    get: (name) => list().find((s) => s.name === name),
    // One load keeps its own order (its first match wins) and goes ahead of earlier loads.
    load: (scenarios) => runtime.load(scenarios),
  };
}
