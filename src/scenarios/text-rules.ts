import type { ErrorDetail } from '../errors/index.ts';
import { nestedQuantifier } from './regex-source.ts';
import { TASK_MATCH_KEYS, TEXT_MATCH_KEYS } from './types.ts';
import type { Scenario, TextBehaviour, TextCondition } from './types.ts';

/** Match keys only a Chat Completions-style call can fit: the reference gives the other formats no tools and no response format. */
const CHAT_ONLY_KEYS = ['tools', 'tool_choice', 'response_format', 'tool_result'] as const;

/** Keys of a text block that say what one answer is: with `answers`, each answer says them for itself. */
const ANSWER_KEYS = [
  'text',
  'json',
  'tool_calls',
  'chunks',
  'error',
  'error_after_chunks',
  'max_output_tokens',
  'output_tokens',
  'input_tokens',
  'finish',
  'stop_sequence',
] as const satisfies readonly (keyof TextBehaviour)[];

/**
 * What the schema cannot say of scenarios already checked against it: a rule that no call could ever fit, or that
 * would be ignored without a word. Each problem names the scenario's place and name and the key:
 * - a text-call rule (`last_user`, `text_request`, …) on a scenario without a `text` block, or beside a task rule;
 * - a task rule (`input`, `metadata`) on a scenario with a `text` block: text calls have neither;
 * - `models` naming task models only, on a text scenario;
 * - a rule or an answer only a Chat Completions-style call has (tools, tool calls, response_format) where
 *   `match.formats` names other formats only;
 * - a `regex` that is not one, or that repeats a repeating group (`(a+)+`, which backtracks without end);
 * - answer keys on a block that gives `answers` (each answer says its own), and `times` where no match chooses it.
 * `taskModels`: the task models' names, when known (the control API's in-process check has them too).
 */
export function textRuleProblems(scenarios: Scenario[], taskModels: ReadonlySet<string>): ErrorDetail[] {
  return scenarios.flatMap((scenario, i) => scenarioProblems(scenario, `scenarios[${i}]`, taskModels));
}

function scenarioProblems(scenario: Scenario, at: string, taskModels: ReadonlySet<string>): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  const problem = (field: string, message: string): void => void problems.push({ field: `${at}.${field}`, message: `${message} (scenario '${scenario.name}')` });
  const match = scenario.match ?? {};
  const textKeys = TEXT_MATCH_KEYS.filter((key) => match[key] !== undefined);
  const taskKeys = TASK_MATCH_KEYS.filter((key) => match[key] !== undefined);
  const { text } = scenario;
  for (const key of taskKeys) {
    if (textKeys[0] !== undefined) problem(`match.${key}`, `is a task rule, and match.${textKeys[0]} a text-call rule: no call fits both`);
    else if (text) problem(`match.${key}`, `does not apply to text calls, which have no ${key}, and this scenario has a text block`);
  }
  if (!text && textKeys[0] !== undefined && taskKeys.length === 0) {
    problem(`match.${textKeys[0]}`, 'applies to text calls only, and this scenario has no text block (a task scenario); give it one (`text: {}` for the generated answer)');
  }
  if ((text || textKeys.length > 0) && match.models && match.models.length > 0 && match.models.every((m) => taskModels.has(m))) {
    problem('match.models', `names task models only (${match.models.join(', ')}): no text call fits`);
  }
  const formats = match.formats;
  const chatless = formats !== undefined && !formats.includes('chat');
  if (chatless) {
    for (const key of CHAT_ONLY_KEYS) {
      if (match[key] !== undefined) problem(`match.${key}`, `only Chat Completions-style calls have it, and match.formats names ${formats.join(', ')} only`);
    }
  }
  for (const key of ['last_user', 'system', 'any_message'] as const) {
    const condition = match[key];
    if (condition) regexProblem(condition, `match.${key}`, problem);
  }
  if (match.tool_result?.content) regexProblem(match.tool_result.content, 'match.tool_result.content', problem);
  if (text) {
    const answers = text.answers ?? [text];
    answers.forEach((answer, n) => {
      const where = text.answers ? `text.answers[${n}]` : 'text';
      if (chatless && answer.tool_calls) {
        problem(`${where}.tool_calls`, `cannot be carried by a ${formats.join(' or ')} answer (the reference gives tools to chat completions only), and match.formats names no other`);
      }
    });
    if (text.answers) {
      for (const key of ANSWER_KEYS) if (text[key] !== undefined) problem(`text.${key}`, 'goes in each answer: this block gives answers');
      if (text.reject) problem('text.reject', 'goes in each answer: this block gives answers');
      if (text.first_token_ms > 0 || text.chunk_interval_ms > 0) problem(text.first_token_ms > 0 ? 'text.first_token_ms' : 'text.chunk_interval_ms', 'goes in each answer: this block gives answers');
    }
    if (text.times !== undefined && !scenario.match) problem('text.times', 'counts the calls a match chooses, and this scenario has no match (the header chooses it however often)');
  }
  return problems;
}

function regexProblem(condition: TextCondition, field: string, problem: (field: string, message: string) => void): void {
  if (condition.regex === undefined) return;
  try {
    new RegExp(condition.regex, condition.case_insensitive ? 'i' : '');
  } catch (err) {
    problem(`${field}.regex`, `is not a regular expression: ${(err as Error).message}`);
    return;
  }
  if (nestedQuantifier(condition.regex)) {
    problem(`${field}.regex`, 'repeats a group that itself repeats without bound (as (a+)+ does), which can backtrack for minutes on a long prompt: write it without the nested repetition');
  }
}
