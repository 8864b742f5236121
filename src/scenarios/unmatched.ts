import type { TextView } from '../text-formats/index.ts';
import type { ScenarioRegistry } from './registry.ts';
import { callsOf } from './select-text.ts';
import { CallTexts } from './call-texts.ts';
import { textMisses } from './text-match.ts';
import type { TextFacts } from './text-match.ts';

/** How many of the closest rules a refusal names. */
const CLOSEST = 3;

/**
 * What strict text answers say of a call no scenario chose: what it asked (format, model, the texts the rules read,
 * tools) and the scenarios whose match came closest, each with the rules that held and those that did not.
 * @see docs/reference/scenarios.md "Answers on demand" (strict)
 */
export function unmatchedMessage(registry: ScenarioRegistry, facts: TextFacts): string {
  // Every rule is read through (a refusal, not a hot path): no index.
  const texts = new CallTexts(facts.view, 0);
  const near: { name: string; held: string[]; missed: string[]; note: string | null }[] = [];
  for (const { scenario, match } of registry.textRules(facts.view.format).rules) {
    const { held, missed } = textMisses(match, facts, texts);
    // Fits, but passed over: used up, or its answer is tool calls the format cannot carry.
    const note = missed.length > 0 ? null : registry.uses(scenario.name) >= callsOf(scenario.text) ? `used up (${registry.uses(scenario.name)} calls)` : 'answers with tool calls, chat only';
    near.push({ name: scenario.name, held, missed, note });
  }
  // Most rules held first, then fewest missed; the registry's order among equals.
  const closest = near
    .map((entry, at) => ({ ...entry, at }))
    .sort((a, b) => b.held.length - a.held.length || a.missed.length - b.missed.length || a.at - b.at)
    .slice(0, CLOSEST)
    .map((e) => `'${e.name}' (${[e.held.length > 0 ? `fits ${e.held.join(', ')}` : '', e.missed.length > 0 ? `not ${e.missed.join(', ')}` : '', e.note ?? ''].filter(Boolean).join('; ')})`);
  const rules = closest.length > 0 ? `closest: ${closest.join(', ')}` : 'no scenario has match rules for text calls';
  return `No scenario answers this call (text answers are strict): ${askedOf(facts.view)}; ${rules}.`;
}

/** The call as the match rules read it, in a line. */
function askedOf(view: TextView): string {
  const parts = [`a ${view.format} call to ${view.model}`, view.stream ? 'streamed' : 'not streamed'];
  if (view.lastUser !== null) parts.push(`last user message ${quoted(view.lastUser)}`);
  if (view.system !== null) parts.push(`system ${quoted(view.system)}`);
  if (view.tools.length > 0) parts.push(`tools ${view.tools.map((t) => t.name).join(', ')} (tool_choice ${typeof view.toolChoice === 'string' ? view.toolChoice : view.toolChoice.name})`);
  if (view.responseFormat.type !== 'text') parts.push(`response_format ${view.responseFormat.type}${view.responseFormat.name ? ` '${view.responseFormat.name}'` : ''}`);
  if (view.lastToolResult) parts.push(`last tool result${view.lastToolResult.name ? ` from ${view.lastToolResult.name}` : ''} ${quoted(view.lastToolResult.content)}`);
  parts.push(`${view.assistantTurns} assistant turn${view.assistantTurns === 1 ? '' : 's'}`);
  return parts.join(', ');
}

/** A text in quotes, cut to 80 characters. */
const quoted = (text: string): string => JSON.stringify(text.length > 80 ? `${text.slice(0, 79)}…` : text);
