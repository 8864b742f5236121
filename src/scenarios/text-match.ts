import type { TextView } from '../text-formats/index.ts';
import type { CallTexts } from './call-texts.ts';
import { pairsOf, regexPairs } from './text-index.ts';
import type { Pairs, Subject } from './text-index.ts';
import { TASK_MATCH_KEYS, TEXT_MATCH_KEYS } from './types.ts';
import type { ScenarioMatch, TextCondition } from './types.ts';

/** What a text call offers its match rules: the format's view of it, the account, and its fingerprint when asked. */
export interface TextFacts {
  view: TextView;
  accountId: string;
  /** `textFingerprint()` of the call, worked out only for a rule that asks (memoize it: many rules may). */
  fingerprint: () => string | null;
}

/** A text condition, compiled: what it compares and how. */
export interface CompiledCondition {
  kind: 'contains' | 'equals' | 'regex';
  /** The needle or the whole text, lower-cased when `folded`. */
  value: string;
  regex: RegExp | null;
  /** Compared with the lower-cased text (`case_insensitive`). */
  folded: boolean;
  /** Pairs of characters a text must have to fit (see text-index.ts), of the lower-cased text when `folded`. */
  pairs: Pairs;
}

/**
 * A match compiled once, when its scenario is loaded: sets for lists, regular expressions built. Plain data tested
 * in one place, cheap conditions first: with a thousand rules, the sets and flags rule most out before any text
 * is read.
 */
export interface CompiledTextMatch {
  /** A task-only key (`input`, `metadata`): no text call fits. */
  taskOnly: boolean;
  models: ReadonlySet<string> | null;
  formats: ReadonlySet<string> | null;
  stream: boolean | null;
  accounts: ReadonlySet<string> | null;
  assistantTurns: number | null;
  tools: readonly string[] | null;
  toolChoice: NonNullable<ScenarioMatch['tool_choice']> | null;
  responseFormat: NonNullable<ScenarioMatch['response_format']> | null;
  toolResult: { name: string | null; content: CompiledCondition | null } | null;
  lastUser: CompiledCondition | null;
  system: CompiledCondition | null;
  anyMessage: CompiledCondition | null;
  textRequest: string | null;
}

/**
 * Compiles a scenario's match for text calls. Throws a SyntaxError for a `regex` that is not one (refused at load;
 * see `textRuleProblems`).
 */
export function compileTextMatch(match: ScenarioMatch): CompiledTextMatch {
  const { tool_result: toolResult } = match;
  return {
    taskOnly: TASK_MATCH_KEYS.some((key) => match[key] !== undefined),
    models: match.models ? new Set(match.models) : null,
    formats: match.formats ? new Set(match.formats) : null,
    stream: match.stream ?? null,
    accounts: match.accounts ? new Set(match.accounts) : null,
    assistantTurns: match.assistant_turns ?? null,
    tools: match.tools ?? null,
    toolChoice: match.tool_choice ?? null,
    responseFormat: match.response_format ?? null,
    toolResult: toolResult ? { name: toolResult.name ?? null, content: toolResult.content ? compileCondition(toolResult.content) : null } : null,
    lastUser: match.last_user ? compileCondition(match.last_user) : null,
    system: match.system ? compileCondition(match.system) : null,
    anyMessage: match.any_message ? compileCondition(match.any_message) : null,
    textRequest: match.text_request ?? null,
  };
}

/** Whether a text call fits a compiled match: every condition holds (the cheap ones tried first). */
export function fitsText(m: CompiledTextMatch, f: TextFacts, texts: CallTexts): boolean {
  const { view } = f;
  if (m.taskOnly) return false;
  if (m.models !== null && !m.models.has(view.model)) return false;
  if (m.formats !== null && !m.formats.has(view.format)) return false;
  if (m.stream !== null && m.stream !== view.stream) return false;
  if (m.accounts !== null && !m.accounts.has(f.accountId)) return false;
  if (m.assistantTurns !== null && m.assistantTurns !== view.assistantTurns) return false;
  if (m.tools !== null && !toolsFit(m.tools, view)) return false;
  if (m.toolChoice !== null && !toolChoiceFits(m.toolChoice, view)) return false;
  if (m.responseFormat !== null && !responseFormatFits(m.responseFormat, view)) return false;
  if (m.toolResult !== null && !toolResultFits(m.toolResult, view, texts)) return false;
  if (m.lastUser !== null && !holds(m.lastUser, texts.lastUser())) return false;
  if (m.system !== null && !holds(m.system, texts.system())) return false;
  if (m.anyMessage !== null && !holds(m.anyMessage, texts.messages())) return false;
  // Last: it hashes the whole request.
  return m.textRequest === null || f.fingerprint() === m.textRequest;
}

/** The match keys of a compiled match that a text call fits and those it does not (all tested): how close it came. */
export function textMisses(m: CompiledTextMatch, f: TextFacts, texts: CallTexts): { held: string[]; missed: string[] } {
  const { view } = f;
  const held: string[] = [];
  const missed: string[] = [];
  const tested: [string, boolean | null][] = [
    ['models', m.models && m.models.has(view.model)],
    ['formats', m.formats && m.formats.has(view.format)],
    ['stream', m.stream === null ? null : m.stream === view.stream],
    ['accounts', m.accounts && m.accounts.has(f.accountId)],
    ['assistant_turns', m.assistantTurns === null ? null : m.assistantTurns === view.assistantTurns],
    ['tools', m.tools && toolsFit(m.tools, view)],
    ['tool_choice', m.toolChoice && toolChoiceFits(m.toolChoice, view)],
    ['response_format', m.responseFormat && responseFormatFits(m.responseFormat, view)],
    ['tool_result', m.toolResult && toolResultFits(m.toolResult, view, texts)],
    ['last_user', m.lastUser && holds(m.lastUser, texts.lastUser())],
    ['system', m.system && holds(m.system, texts.system())],
    ['any_message', m.anyMessage && holds(m.anyMessage, texts.messages())],
    ['text_request', m.textRequest === null ? null : f.fingerprint() === m.textRequest],
  ];
  for (const [key, ok] of tested) if (ok !== null) (ok ? held : missed).push(key);
  return { held, missed };
}

export const toolsFit = (names: readonly string[], view: TextView): boolean => names.every((name) => view.tools.some((tool) => tool.name === name));

export function toolChoiceFits(wanted: NonNullable<ScenarioMatch['tool_choice']>, view: TextView): boolean {
  const choice = view.toolChoice;
  return typeof wanted === 'string' ? choice === wanted : typeof choice === 'object' && choice.name === wanted.name;
}

export function responseFormatFits(wanted: NonNullable<ScenarioMatch['response_format']>, view: TextView): boolean {
  return (wanted.type === undefined || view.responseFormat.type === wanted.type) && (wanted.schema_name === undefined || view.responseFormat.name === wanted.schema_name);
}

function toolResultFits(wanted: NonNullable<CompiledTextMatch['toolResult']>, view: TextView, texts: CallTexts): boolean {
  const result = view.lastToolResult;
  return result !== null && (wanted.name === null || result.name === wanted.name) && (wanted.content === null || holds(wanted.content, texts.toolResult()));
}

/** Whether a condition holds over one of a subject's texts (none: the call has no such text). */
function holds(c: CompiledCondition, subject: Subject | null): boolean {
  // Ruled out by the pairs it lacks, when indexed; else each text tested as written.
  if (subject === null || !subject.mayHold(c.pairs, c.folded)) return false;
  if (c.regex !== null) {
    for (const text of subject.texts) if (c.regex.test(text)) return true;
    return false;
  }
  for (const text of subject.textsAs(c.folded)) if (c.kind === 'equals' ? text === c.value : text.includes(c.value)) return true;
  return false;
}

/** Whether a match has a key only text calls fit (a task submission never fits it). */
export const hasTextKey = (match: ScenarioMatch): boolean => TEXT_MATCH_KEYS.some((key) => match[key] !== undefined);

function compileCondition(condition: TextCondition): CompiledCondition {
  const folded = condition.case_insensitive === true;
  if (condition.regex !== undefined) {
    return { kind: 'regex', value: condition.regex, regex: new RegExp(condition.regex, folded ? 'i' : ''), folded, pairs: regexPairs(condition.regex, folded) };
  }
  const [kind, value] = condition.equals !== undefined ? (['equals', condition.equals] as const) : (['contains', condition.contains ?? ''] as const);
  const needle = folded ? value.toLowerCase() : value;
  // A text equal to the value has its pairs too: they rule a rule out at its gate.
  return { kind, value: needle, regex: null, folded, pairs: pairsOf(needle) };
}
