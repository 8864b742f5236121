import type { TextView } from '../text-formats/index.ts';
import { gateFor, indexBit, TEXT_LAST_USER, TEXT_MESSAGES, TEXT_SYSTEM, TEXT_TOOL_RESULT } from './call-texts.ts';
import { responseFormatFits, toolChoiceFits, toolsFit } from './text-match.ts';
import type { CompiledCondition, CompiledTextMatch } from './text-match.ts';

// What a rule list keeps beside its rules so that a call reads few of them (see registry.ts `textRules`): the
// rules each call shape can fit, each rule's gate, and which texts are worth an index.

/**
 * What of a call its match rules read besides the texts and the account, as a key: the format, model, stream,
 * agent turn, tools, tool choice, response format, the tool a tool result answers, and which texts it has. Calls
 * of one shape pass or fail `fitsShape` alike, so a rule list kept per shape leaves out, unread, every rule that
 * one of these rules out.
 */
export function shapeOf(view: TextView): string {
  const choice = view.toolChoice;
  const result = view.lastToolResult;
  // JSON, so that no name can make two shapes one.
  return JSON.stringify([
    view.format,
    view.model,
    view.stream,
    view.assistantTurns,
    view.tools.map((tool) => tool.name),
    typeof choice === 'string' ? choice : { name: choice.name },
    view.responseFormat.type,
    view.responseFormat.name,
    result === null ? null : [result.name],
    view.lastUser === null,
    view.system === null,
  ]);
}

/**
 * Whether a call of this shape can fit a compiled match: `fitsText` but for the texts, the account and the
 * fingerprint. It reads nothing of the view that `shapeOf` leaves out.
 */
export function fitsShape(m: CompiledTextMatch, view: TextView): boolean {
  if (m.taskOnly) return false;
  if (m.models !== null && !m.models.has(view.model)) return false;
  if (m.formats !== null && !m.formats.has(view.format)) return false;
  if (m.stream !== null && m.stream !== view.stream) return false;
  if (m.assistantTurns !== null && m.assistantTurns !== view.assistantTurns) return false;
  if (m.tools !== null && !toolsFit(m.tools, view)) return false;
  if (m.toolChoice !== null && !toolChoiceFits(m.toolChoice, view)) return false;
  if (m.responseFormat !== null && !responseFormatFits(m.responseFormat, view)) return false;
  const result = view.lastToolResult;
  if (m.toolResult !== null && (result === null || (m.toolResult.name !== null && result.name !== m.toolResult.name))) return false;
  if (m.lastUser !== null && view.lastUser === null) return false;
  return m.system === null || view.system !== null;
}

/** The text conditions of a match, each with the text it reads. */
const conditionsOf = (m: CompiledTextMatch): [number, CompiledCondition | null][] => [
  [TEXT_LAST_USER, m.lastUser],
  [TEXT_SYSTEM, m.system],
  [TEXT_TOOL_RESULT, m.toolResult?.content ?? null],
  [TEXT_MESSAGES, m.anyMessage],
];

/** Conditions (with pairs) that must read a text in one form before its index costs less than their scans. */
const WORTH_AN_INDEX = 16;

/**
 * The texts (in each form) that enough of these matches read for an index to pay (see text-index.ts), as the
 * bits `CallTexts` takes: a few rules scan faster than a call builds an index.
 */
export function textsToIndex(matches: readonly CompiledTextMatch[]): number {
  const reads = new Array<number>(8).fill(0);
  for (const m of matches) {
    for (const [field, c] of conditionsOf(m)) if (c && c.pairs.slots.length > 0) reads[indexBit(field, c.folded)]! += 1;
  }
  return reads.reduce((bits, count, bit) => (count >= WORTH_AN_INDEX ? bits | (1 << bit) : bits), 0);
}

/**
 * A compiled match's gate: one pair of characters that one of its text conditions needs, as a number (the text it
 * reads, its form and the pair's slot) a rule list keeps beside its rules; -1 for a match without one. A call whose
 * text lacks the pair cannot fit the match: its rule is passed over without being read.
 */
export function gateOf(m: CompiledTextMatch): number {
  // The condition with the likely rarest pair: the one a call most often lacks.
  let gate = -1;
  let rarest = -1;
  for (const [field, c] of conditionsOf(m)) {
    const slot = c?.pairs.slots[0];
    if (!c || slot === undefined || c.pairs.rarest <= rarest) continue;
    rarest = c.pairs.rarest;
    gate = gateFor(field, c.folded, slot);
  }
  return gate;
}
