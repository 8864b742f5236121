import type { TextView } from '../text-formats/index.ts';
import type { ScenariosRepo } from './records.ts';
import { compileTextMatch } from './text-match.ts';
import type { CompiledTextMatch } from './text-match.ts';
import type { Scenario } from './types.ts';

/** A scenario with its match as text calls are tested against it. */
export interface TextRule {
  scenario: Scenario;
  match: CompiledTextMatch;
}

/**
 * The scenarios in force: those loaded at run time through the control API (kept in the store, newest first)
 * ahead of the start-up library (the user's files, then the built-in ones; see `loadScenarioLibrary`). A loaded
 * scenario with the name of a file scenario replaces it until reset, which brings the start-up library back.
 *
 * It also keeps how many text calls each scenario answered: run-time state, which `times` and the order of
 * `answers` follow. A load of a name starts its count again; a reset (or a state import) starts them all again.
 */
export interface ScenarioRegistry {
  list(): Scenario[];
  get(name: string): Scenario | undefined;
  /** Adds or replaces run-time scenarios. */
  load(scenarios: Scenario[]): void;
  /**
   * The scenarios a text call of `format` may fit, in order, each with its match compiled once: those with a
   * match a text call can fit whose `formats` (if any) name the format.
   */
  textRules(format: TextView['format']): readonly TextRule[];
  /** The text calls a scenario answered since it was loaded or the store was last replaced. */
  uses(name: string): number;
  /** Counts one more text call the scenario answered. */
  use(name: string): void;
}

export function createScenarioRegistry(fromFiles: Scenario[], runtime: ScenariosRepo): ScenarioRegistry {
  // The list is asked for on every call: made again only when the loaded ones change (the repository hands out
  // the same array until a load or a reset).
  let listed: { loaded: Scenario[]; all: Scenario[] } | null = null;
  const list = (): Scenario[] => {
    const loaded = runtime.all();
    if (listed?.loaded !== loaded) {
      const names = new Set(loaded.map((l) => l.name));
      listed = { loaded, all: [...loaded, ...fromFiles.filter((f) => !names.has(f.name))] };
    }
    return listed.all;
  };
  // Compiled once a scenario: the repository hands out new objects only after a load or a reset.
  const compiled = new WeakMap<Scenario, CompiledTextMatch | null>();
  const compile = (scenario: Scenario): CompiledTextMatch | null => {
    let match = compiled.get(scenario);
    if (match === undefined) {
      try {
        match = scenario.match ? compileTextMatch(scenario.match) : null;
      } catch {
        // A regex refused at load cannot be here but through a state document written by hand: it fits nothing.
        match = null;
      }
      if (match?.taskOnly) match = null;
      compiled.set(scenario, match);
    }
    return match;
  };
  // Per format, for the list they were made from: the scan of a call skips what its format rules out.
  let rules: { of: Scenario[]; byFormat: Map<string, TextRule[]> } | null = null;
  const textRules = (format: TextView['format']): readonly TextRule[] => {
    const all = list();
    if (rules?.of !== all) rules = { of: all, byFormat: new Map() };
    let found = rules.byFormat.get(format);
    if (!found) {
      found = all.flatMap((scenario) => {
        const match = compile(scenario);
        return match && (match.formats === null || match.formats.has(format)) ? [{ scenario, match }] : [];
      });
      rules.byFormat.set(format, found);
    }
    return found;
  };
  const counts = new Map<string, number>();
  let countedIn = runtime.epoch();
  const current = (): Map<string, number> => {
    if (runtime.epoch() !== countedIn) {
      counts.clear();
      countedIn = runtime.epoch();
    }
    return counts;
  };
  return {
    list,
    get: (name) => list().find((s) => s.name === name),
    // One load keeps its own order (its first match wins) and goes ahead of earlier loads.
    load: (scenarios) => {
      runtime.load(scenarios);
      const counted = current();
      for (const scenario of scenarios) counted.delete(scenario.name);
    },
    textRules,
    uses: (name) => current().get(name) ?? 0,
    use: (name) => {
      const counted = current();
      counted.set(name, (counted.get(name) ?? 0) + 1);
    },
  };
}
