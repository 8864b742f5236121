import { isPlainObject } from '../contract/index.ts';
import type { ScenarioMatch, TextBehaviour } from '../scenarios/index.ts';
import { textFormatOf } from '../text-formats/index.ts';
import type { HarEntry } from './har.ts';
import type { Recording } from './read.ts';
import { answerOf } from './recorded-answers.ts';
import type { Answer } from './recorded-answers.ts';
import { parseJson, redactedEntry, redactedText } from './recorded-content.ts';
import { described, recordedTextScenario } from './scenario-file.ts';
import type { Imported, ScenarioEntry, Skipped } from './scenario-file.ts';
import { lastUserRule } from './text-match-rule.ts';
import type { TextMatchMode } from './text-match-rule.ts';

/**
 * One scenario per distinct recorded text request (by its fingerprint; a streamed recording of it before another),
 * named `recorded-text-<12 hex digits of the fingerprint>`: `match.text_request` (with `match: 'last-user'`, the
 * format, model and last user message instead, one scenario per distinct three), the answer's content deltas as
 * `chunks` (a non-streamed answer's text cut into words), how it ended, its usage, `first_token_ms` from the wait
 * for the first byte and, for a stream, `chunk_interval_ms` spreading the rest of it over the chunks. Error
 * answers, tool calls and unreadable answers give none. Redacted text (`xxx`) is imported by request: it replays
 * the recorded chunking and pacing; by last user message, a redacted call gives none (its message is x'd out).
 */
export function importTextCalls(recording: Recording, matchBy: TextMatchMode = 'request'): Imported {
  const skipped: Skipped[] = [];
  const chosen = new Map<string, { id: string; fingerprint: string; match: ScenarioMatch; entry: HarEntry; answer: Answer }>();
  const same = matchBy === 'request' ? 'the same request as an earlier one' : 'the same last user message as an earlier one';
  for (const entry of recording.entries) {
    const format = entry._svcEmulator?.textFormat ?? textFormatOf(pathOf(entry))?.name;
    if (format === undefined) continue;
    const id = `${entry.request.method} ${pathOf(entry)} at ${entry.startedDateTime}`;
    const fingerprint = entry._svcEmulator?.textFingerprint;
    if (fingerprint === undefined) {
      skipped.push({ what: 'text call', id, reason: 'no fingerprint (a request the format could not read)' });
      continue;
    }
    const answer = answerOf(entry, format);
    if (typeof answer === 'string') {
      skipped.push({ what: 'text call', id, reason: answer });
      continue;
    }
    const rule = matchBy === 'request' ? { match: { text_request: fingerprint }, key: fingerprint } : lastUserRule(entry, format);
    if (typeof rule === 'string') {
      skipped.push({ what: 'text call', id, reason: rule });
      continue;
    }
    const earlier = chosen.get(rule.key);
    if (earlier && (earlier.answer.streamed || !answer.streamed)) {
      skipped.push({ what: 'text call', id, reason: same });
      continue;
    }
    // A stream shows the real chunking and pacing: it replaces an earlier answer of the request that was not streamed.
    if (earlier) skipped.push({ what: 'text call', id: earlier.id, reason: same });
    chosen.set(rule.key, { id, fingerprint, match: rule.match, entry, answer });
  }
  // The scenario is named by the request's fingerprint, which does not see roles: two last user messages of one
  // fingerprint (a turn said by the user in one call, by the assistant in the other) keep the first.
  const named = new Set<string>();
  const kept = [...chosen.values()].filter(({ id, fingerprint }) => {
    if (!named.has(fingerprint)) {
      named.add(fingerprint);
      return true;
    }
    skipped.push({ what: 'text call', id, reason: 'the same request as an earlier one' });
    return false;
  });
  const scenarios = kept.map(({ fingerprint, match, entry, answer }) => textScenario(fingerprint, match, entry, answer));
  const redacted = kept.filter(({ entry, answer }) => redactedEntry(entry) || redactedText(answer.chunks.join(''))).length;
  return { scenarios, skipped, redacted };
}

/** The path of a recorded request's address (an address without a host is read as a path). */
const pathOf = (entry: HarEntry): string => new URL(entry.request.url, 'http://recording').pathname;

function textScenario(fingerprint: string, match: ScenarioMatch, entry: HarEntry, answer: Answer): ScenarioEntry {
  const { wait, receive } = entry.timings;
  const text: Partial<TextBehaviour> = { chunks: answer.chunks };
  if (answer.finish !== 'stop') text.finish = answer.finish;
  if (answer.stopSequence !== undefined) text.stop_sequence = answer.stopSequence;
  if (answer.nativeStopReason) text.messages_stop_reason = 'stop_sequence';
  if (answer.inputTokens !== undefined && answer.inputTokens >= 0 && answer.inputTokens <= 10_000_000) text.input_tokens = answer.inputTokens;
  if (answer.outputTokens !== undefined && answer.outputTokens >= 1 && answer.outputTokens <= 100_000) text.output_tokens = answer.outputTokens;
  text.first_token_ms = Math.min(600_000, Math.max(0, Math.round(wait)));
  if (answer.streamed && answer.chunks.length > 1) text.chunk_interval_ms = Math.min(60_000, Math.max(0, Math.round(receive / (answer.chunks.length - 1))));
  const request = parseJson(entry.request.postData?.text);
  const model = isPlainObject(request) && typeof request['model'] === 'string' ? request['model'] : 'text';
  const how = answer.streamed ? `${answer.chunks.length} chunks streamed` : `${answer.chunks.length} words, not streamed`;
  return {
    name: recordedTextScenario(fingerprint),
    description: described(`Recorded ${model} call ${pathOf(entry)} at ${entry.startedDateTime}: ${how}.`),
    match,
    outcome: 'succeeded',
    text: text as TextBehaviour,
  };
}
