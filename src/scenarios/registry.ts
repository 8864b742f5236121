import type { TextView } from '../text-formats/index.ts';
import type { ScenariosRepo } from './records.ts';
import { fitsShape, gateOf, shapeOf, textsToIndex } from './rule-lists.ts';
import { compileTextMatch } from './text-match.ts';
import type { CompiledTextMatch } from './text-match.ts';
import type { Scenario } from './types.ts';

/** A scenario with its match as text calls are tested against it. */
export interface TextRule {
  scenario: Scenario;
  match: CompiledTextMatch;
}

/**
 * The rules a text call of one format may fit, in order, and beside them (same positions) each one's gate
 * (`gateOf`): a call tests the gates, packed together, before it reads any rule.
 */
export interface TextRules {
  rules: readonly TextRule[];
  gates: Int32Array;
  /** The texts enough of these rules read to be worth indexing (`textsToIndex`). */
  indexed: number;
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
  textRules(format: TextView['format']): TextRules;
  /**
   * Those of `textRules(view.format)` that a call of the view's shape can fit (`fitsShape`), in order: the list a
   * call is matched against, kept per shape.
   */
  textRulesFor(view: TextView): TextRules;
  /** The text calls a scenario answered since it was loaded or the store was last replaced. */
  uses(name: string): number;
  /** Counts one more text call the scenario answered. */
  use(name: string): void;
}

/** Rule lists kept per call shape (`textRulesFor`) before the memo starts again. */
const SHAPES_KEPT = 256;
/** Rules of a format from which a list per call shape is kept. */
const SPLIT_FROM = 32;

export function createScenarioRegistry(fromFiles: Scenario[], runtime: ScenariosRepo): ScenarioRegistry {
  // The list is asked for on every call: made again only when the loaded ones change (the repository hands out
  // the same array until a load or a reset). By name too: every text call no rule fits asks for `default`, past a
  // thousand loaded scenarios perhaps.
  let listed: { loaded: Scenario[]; all: Scenario[]; byName: Map<string, Scenario> } | null = null;
  const inForce = (): NonNullable<typeof listed> => {
    const loaded = runtime.all();
    if (listed?.loaded !== loaded) {
      const names = new Set(loaded.map((l) => l.name));
      const all = [...loaded, ...fromFiles.filter((f) => !names.has(f.name))];
      const byName = new Map<string, Scenario>();
      // The first of a name, as a search of the list finds it.
      for (const scenario of all) if (!byName.has(scenario.name)) byName.set(scenario.name, scenario);
      listed = { loaded, all, byName };
    }
    return listed;
  };
  const list = (): Scenario[] => inForce().all;
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
  // Per format and per call shape, for the list they were made from: the scan of a call skips what its format and
  // its shape rule out.
  let rules: { of: Scenario[]; byFormat: Map<string, TextRules>; byShape: Map<string, TextRules> } | null = null;
  const made = (): NonNullable<typeof rules> => {
    const all = list();
    if (rules?.of !== all) rules = { of: all, byFormat: new Map(), byShape: new Map() };
    return rules;
  };
  const packed = (chosen: TextRule[]): TextRules => ({
    rules: chosen,
    gates: Int32Array.from(chosen, (rule) => gateOf(rule.match)),
    indexed: textsToIndex(chosen.map((rule) => rule.match)),
  });
  const textRules = (format: TextView['format']): TextRules => {
    const { of: all, byFormat } = made();
    let found = byFormat.get(format);
    if (!found) {
      found = packed(
        all.flatMap((scenario) => {
          const match = compile(scenario);
          return match && (match.formats === null || match.formats.has(format)) ? [{ scenario, match }] : [];
        }),
      );
      byFormat.set(format, found);
    }
    return found;
  };
  const textRulesFor = (view: TextView): TextRules => {
    const { byShape } = made();
    const ofFormat = textRules(view.format);
    // A few rules are read faster than a call's shape is worked out.
    if (ofFormat.rules.length < SPLIT_FROM) return ofFormat;
    const shape = shapeOf(view);
    let found = byShape.get(shape);
    if (!found) {
      // Shapes come from the calls: a client that makes a new one each call (its turns, its tools) gets no memo.
      if (byShape.size >= SHAPES_KEPT) byShape.clear();
      found = packed(ofFormat.rules.filter((rule) => fitsShape(rule.match, view)));
      byShape.set(shape, found);
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
    get: (name) => inForce().byName.get(name),
    // One load keeps its own order (its first match wins) and goes ahead of earlier loads.
    load: (scenarios) => {
      runtime.load(scenarios);
      const counted = current();
      for (const scenario of scenarios) counted.delete(scenario.name);
    },
    textRules,
    textRulesFor,
    uses: (name) => current().get(name) ?? 0,
    use: (name) => {
      const counted = current();
      counted.set(name, (counted.get(name) ?? 0) + 1);
    },
  };
}
