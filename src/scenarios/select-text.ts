import { ApiError } from '../errors/index.ts';
import type { ScenarioRegistry, TextRule } from './registry.ts';
import { SCENARIO_HEADER } from './select.ts';
import { CallTexts } from './call-texts.ts';
import { fitsText } from './text-match.ts';
import type { TextFacts } from './text-match.ts';
import type { Scenario, TextBehaviour } from './types.ts';

/** The scenario a text call follows, and which of its answers. */
export interface TextChoice {
  scenario: Scenario;
  /** The text block the call follows: the scenario's own, or the step of its `answers` (absent: the defaults). */
  behaviour: TextBehaviour | undefined;
  /** The step of `answers` (from 0), or null for a scenario without them. */
  step: number | null;
  /** How it was chosen. */
  by: 'header' | 'match' | 'default';
  /**
   * Counts the call as one the scenario answered. Called once the call is admitted (its points frozen) or as an
   * error answer refuses it: a call refused for the points or the limits leaves the step for the next one.
   */
  use(): void;
}

/**
 * The scenario of a text call: the `X-Emulator-Scenario` header, else the first scenario (in the registry's order)
 * whose match fits and that has calls left (`times`), else `default`. A scenario whose next answer is tool calls
 * fits Chat Completions-style calls only, the one format the reference gives tools; named by the header for another
 * format, the call is refused (422 naming the header), never answered in a shape the format does not have.
 * @see docs/reference/scenarios.md "Answers on demand"
 */
export function selectTextScenario(registry: ScenarioRegistry, facts: TextFacts, header: string | undefined): TextChoice {
  const choice = (scenario: Scenario, by: TextChoice['by']): TextChoice => {
    const { behaviour, step } = answerAt(scenario.text, registry.uses(scenario.name));
    return { scenario, behaviour, step, by, use: () => registry.use(scenario.name) };
  };
  if (header !== undefined) {
    const scenario = registry.get(header);
    if (!scenario) {
      throw new ApiError('invalid_params', `${SCENARIO_HEADER}: no scenario named '${header}'`, [
        { field: SCENARIO_HEADER, message: `no scenario named '${header}' (GET /_emulator/scenarios lists them)` },
      ]);
    }
    const chosen = choice(scenario, 'header');
    if (!carries(facts, chosen.behaviour)) {
      const message = `scenario '${header}' answers with tool calls, which a ${facts.view.format === 'responses' ? 'Responses' : 'Messages'}-style call cannot carry (the reference gives tools to chat completions only)`;
      throw new ApiError('invalid_params', `${SCENARIO_HEADER}: ${message}`, [{ field: SCENARIO_HEADER, message }]);
    }
    return chosen;
  }
  // The rules this call's shape can fit, and of those, the gate first: with many rules, most are passed over on
  // one bit of the call's text index, without being read.
  const { rules, gates, indexed } = registry.textRulesFor(facts.view);
  const texts = new CallTexts(facts.view, indexed);
  for (let at = 0; at < rules.length; at++) {
    if (!texts.admits(gates[at] as number)) continue;
    const { scenario, match } = rules[at] as TextRule;
    if (!fitsText(match, facts, texts)) continue;
    const uses = registry.uses(scenario.name);
    if (uses >= callsOf(scenario.text)) continue;
    const chosen = choice(scenario, 'match');
    if (carries(facts, chosen.behaviour)) return chosen;
  }
  const fallback = registry.get('default');
  if (!fallback) throw new Error('no default scenario');
  return choice(fallback, 'default');
}

/** Whether the call's format can carry an answer: tool calls only in the Chat Completions style. */
const carries = (facts: TextFacts, behaviour: TextBehaviour | undefined): boolean => behaviour?.tool_calls === undefined || facts.view.format === 'chat';

/** How many calls a step answers: as it says, else one, the last step every call after. */
const stepCalls = (answers: TextBehaviour[], i: number): number => answers[i]?.times ?? (i === answers.length - 1 ? Infinity : 1);

/**
 * How many calls a text block answers through its match rules: its `times`, else its answers' calls together
 * (without end unless the last one says), else without end.
 */
export function callsOf(text: TextBehaviour | undefined): number {
  if (text?.times !== undefined) return text.times;
  const answers = text?.answers;
  if (!answers) return Infinity;
  let calls = 0;
  for (let i = 0; i < answers.length; i++) calls += stepCalls(answers, i);
  return calls;
}

/** The answer of a block's `uses`-th call (from 0): the block itself, or the step of its answers (past the end, the last). */
export function answerAt(text: TextBehaviour | undefined, uses: number): { behaviour: TextBehaviour | undefined; step: number | null } {
  const answers = text?.answers;
  if (!answers || answers.length === 0) return { behaviour: text, step: null };
  let left = uses;
  for (let i = 0; i < answers.length; i++) {
    const calls = stepCalls(answers, i);
    if (left < calls) return { behaviour: answers[i], step: i };
    left -= calls;
  }
  return { behaviour: answers.at(-1), step: answers.length - 1 };
}
