import type { Scenario } from './types.ts';

/**
 * The scenarios in force: those loaded at run time through the control API (kept in the store, newest first)
 * ahead of those from the files. A loaded scenario with the name of a file scenario replaces it until reset.
 */
export interface ScenarioRegistry {
  list(): Scenario[];
  get(name: string): Scenario | undefined;
  /** Adds or replaces run-time scenarios. */
  load(scenarios: Scenario[]): void;
}

export function createScenarioRegistry(fromFiles: Scenario[], runtime: () => Scenario[]): ScenarioRegistry {
  const list = (): Scenario[] => {
    const loaded = runtime();
    return [...loaded, ...fromFiles.filter((f) => !loaded.some((l) => l.name === f.name))];
  };
  return {
    list,
    get: (name) => list().find((s) => s.name === name),
    load(scenarios) {
      const loaded = runtime();
      for (const scenario of scenarios) {
        const i = loaded.findIndex((s) => s.name === scenario.name);
        if (i >= 0) loaded.splice(i, 1);
      }
      // One load keeps its own order (its first match wins) and goes ahead of earlier loads.
      loaded.unshift(...scenarios);
    },
  };
}
