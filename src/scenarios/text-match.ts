import type { TextView } from '../text-formats/index.ts';
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
interface Condition {
  kind: 'contains' | 'equals' | 'regex';
  /** The needle or the whole text, lower-cased when `folded`. */
  value: string;
  regex: RegExp | null;
  folded: boolean;
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
  toolResult: { name: string | null; content: Condition | null } | null;
  lastUser: Condition | null;
  system: Condition | null;
  anyMessage: Condition | null;
  textRequest: string | null;
}

/** Lower-cases a text of the call once, however many case-insensitive rules read it. */
type Lower = (text: string) => string;

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
export function fitsText(m: CompiledTextMatch, f: TextFacts, lower: Lower): boolean {
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
  if (m.toolResult !== null && !toolResultFits(m.toolResult, view, lower)) return false;
  if (m.lastUser !== null && (view.lastUser === null || !holds(m.lastUser, view.lastUser, lower))) return false;
  if (m.system !== null && (view.system === null || !holds(m.system, view.system, lower))) return false;
  if (m.anyMessage !== null && !anyHolds(m.anyMessage, view.messages, lower)) return false;
  // Last: it hashes the whole request.
  return m.textRequest === null || f.fingerprint() === m.textRequest;
}

/** The match keys of a compiled match that a text call fits and those it does not (all tested): how close it came. */
export function textMisses(m: CompiledTextMatch, f: TextFacts, lower: Lower): { held: string[]; missed: string[] } {
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
    ['tool_result', m.toolResult && toolResultFits(m.toolResult, view, lower)],
    ['last_user', m.lastUser && view.lastUser !== null && holds(m.lastUser, view.lastUser, lower)],
    ['system', m.system && view.system !== null && holds(m.system, view.system, lower)],
    ['any_message', m.anyMessage && anyHolds(m.anyMessage, view.messages, lower)],
    ['text_request', m.textRequest === null ? null : f.fingerprint() === m.textRequest],
  ];
  for (const [key, ok] of tested) if (ok !== null) (ok ? held : missed).push(key);
  return { held, missed };
}

const toolsFit = (names: readonly string[], view: TextView): boolean => names.every((name) => view.tools.some((tool) => tool.name === name));

function toolChoiceFits(wanted: NonNullable<ScenarioMatch['tool_choice']>, view: TextView): boolean {
  const choice = view.toolChoice;
  return typeof wanted === 'string' ? choice === wanted : typeof choice === 'object' && choice.name === wanted.name;
}

function responseFormatFits(wanted: NonNullable<ScenarioMatch['response_format']>, view: TextView): boolean {
  return (wanted.type === undefined || view.responseFormat.type === wanted.type) && (wanted.schema_name === undefined || view.responseFormat.name === wanted.schema_name);
}

function toolResultFits(wanted: NonNullable<CompiledTextMatch['toolResult']>, view: TextView, lower: Lower): boolean {
  const result = view.lastToolResult;
  return result !== null && (wanted.name === null || result.name === wanted.name) && (wanted.content === null || holds(wanted.content, result.content, lower));
}

function anyHolds(condition: Condition, texts: readonly string[], lower: Lower): boolean {
  for (const text of texts) if (holds(condition, text, lower)) return true;
  return false;
}

function holds(c: Condition, text: string, lower: Lower): boolean {
  if (c.regex !== null) return c.regex.test(text);
  const subject = c.folded ? lower(text) : text;
  return c.kind === 'equals' ? subject === c.value : subject.includes(c.value);
}

/** A lower-casing memo for one call's facts. */
export function lowerMemo(): Lower {
  const seen = new Map<string, string>();
  return (text) => {
    let lowered = seen.get(text);
    if (lowered === undefined) {
      lowered = text.toLowerCase();
      seen.set(text, lowered);
    }
    return lowered;
  };
}

/** Whether a match has a key only text calls fit (a task submission never fits it). */
export const hasTextKey = (match: ScenarioMatch): boolean => TEXT_MATCH_KEYS.some((key) => match[key] !== undefined);

function compileCondition(condition: TextCondition): Condition {
  const folded = condition.case_insensitive === true;
  if (condition.regex !== undefined) return { kind: 'regex', value: condition.regex, regex: new RegExp(condition.regex, folded ? 'i' : ''), folded };
  const [kind, value] = condition.equals !== undefined ? (['equals', condition.equals] as const) : (['contains', condition.contains ?? ''] as const);
  return { kind, value: folded ? value.toLowerCase() : value, regex: null, folded };
}

/**
 * Whether a regular expression repeats a group that itself repeats without bound, as `(a+)+` or `(\w*)*` do: on
 * a text that almost fits, such a pattern backtracks for a time exponential in the text's length. A heuristic:
 * it does not see overlapping alternatives (`(a|a)*`).
 */
export function nestedQuantifier(source: string): boolean {
  // One entry per open group: whether an unbounded quantifier appeared inside it.
  const groups: boolean[] = [];
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === '\\') {
      i += 1;
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      continue;
    }
    if (c === '[') inClass = true;
    else if (c === '(') groups.push(false);
    else if (c === ')') {
      const inner = groups.pop() ?? false;
      const after = unboundedAt(source, i + 1);
      if (inner && after) return true;
      // The group's own repetition (or what repeated inside it) makes its enclosing group repeat too.
      if (groups.length > 0 && (inner || after)) groups[groups.length - 1] = true;
    } else if (groups.length > 0 && unboundedAt(source, i)) groups[groups.length - 1] = true;
  }
  return false;
}

/** Whether an unbounded quantifier (`*`, `+`, `{n,}`) starts at `at`. */
function unboundedAt(source: string, at: number): boolean {
  const c = source[at];
  if (c === '*' || c === '+') return true;
  return c === '{' && /^\{\d+,\}/.test(source.slice(at, at + 12));
}
