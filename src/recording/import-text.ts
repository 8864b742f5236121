import { isPlainObject } from '../contract/index.ts';
import type { TextBehaviour } from '../scenarios/index.ts';
import { textFormatOf } from '../text-formats/index.ts';
import type { HarEntry } from './har.ts';
import type { Recording } from './read.ts';
import { answerOf } from './recorded-answers.ts';
import type { Answer } from './recorded-answers.ts';
import { parseJson, redactedEntry, redactedText } from './recorded-content.ts';
import { described, recordedTextScenario } from './scenario-file.ts';
import type { Imported, ScenarioEntry, Skipped } from './scenario-file.ts';

/**
 * One scenario per distinct recorded text request (by its fingerprint; a streamed recording of it before another),
 * named `recorded-text-<12 hex digits of the fingerprint>`: `match.text_request`, the answer's content deltas as
 * `chunks` (a non-streamed answer's text cut into words), how it ended, its usage, `first_token_ms` from the wait
 * for the first byte and, for a stream, `chunk_interval_ms` spreading the rest of it over the chunks. Error
 * answers, tool calls and unreadable answers give none. Redacted text (`xxx`) is imported: it replays the
 * recorded chunking and pacing.
 */
export function importTextCalls(recording: Recording): Imported {
  const skipped: Skipped[] = [];
  const chosen = new Map<string, { id: string; entry: HarEntry; answer: Answer }>();
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
    const earlier = chosen.get(fingerprint);
    if (earlier && (earlier.answer.streamed || !answer.streamed)) {
      skipped.push({ what: 'text call', id, reason: 'the same request as an earlier one' });
      continue;
    }
    // A stream shows the real chunking and pacing: it replaces an earlier answer of the request that was not streamed.
    if (earlier) skipped.push({ what: 'text call', id: earlier.id, reason: 'the same request as an earlier one' });
    chosen.set(fingerprint, { id, entry, answer });
  }
  const scenarios = [...chosen].map(([fingerprint, { entry, answer }]) => textScenario(fingerprint, entry, answer));
  const redacted = [...chosen.values()].filter(({ entry, answer }) => redactedEntry(entry) || redactedText(answer.chunks.join(''))).length;
  return { scenarios, skipped, redacted };
}

/** The path of a recorded request's address (an address without a host is read as a path). */
const pathOf = (entry: HarEntry): string => new URL(entry.request.url, 'http://recording').pathname;

function textScenario(fingerprint: string, entry: HarEntry, answer: Answer): ScenarioEntry {
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
    match: { text_request: fingerprint },
    outcome: 'succeeded',
    text: text as TextBehaviour,
  };
}
