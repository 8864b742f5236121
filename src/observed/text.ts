import type { CheckContext, CheckInfo, Deviation, TextCallObservation } from './history.ts';
import { idsOf, isRecord, named } from './task-view.ts';
import { ENDINGS, ID_PREFIX, INCOMPLETE_REASONS, readAnswer } from './text-answer.ts';
import type { TextAnswer } from './text-answer.ts';
import { STREAM_ERROR_CODES, streamErrorProblem } from './text-error.ts';
import { wentOnPast } from './truncation.ts';

export const TEXT_CHECKS = {
  id: { id: 'text.id.own-prefixed', holds: 'every call has its own id, prefixed per format (svcchat_, svcresp_, svcmsg_), the same on every chunk of its stream' },
  usage: { id: 'text.usage.positive', holds: 'a non-empty prompt has input tokens; usage adds up (total = input + output) where a total is given' },
  maximum: { id: 'text.max-tokens.respected', holds: 'output tokens never exceed the maximum asked for' },
  truncation: {
    id: 'text.truncation.at-max',
    holds:
      'an answer that says it was cut (length / incomplete / max_tokens) has exactly the maximum of output tokens; one ending naturally at exactly the maximum was cut only when the same request answered with more tokens goes on past it from the same text',
  },
  streamUsage: { id: 'text.stream.usage', holds: 'a stream’s final usage agrees with the text it delivered' },
  stop: {
    id: 'text.stop-reason.documented',
    holds:
      'the ending is one the format documents, streamed or not (chat: stop, length, tool_calls, content_filter; responses: completed, incomplete, an incomplete one saying why in incomplete_details.reason max_output_tokens or content_filter, a completed one with no incomplete_details, its stream ending in the event of its status; messages: end_turn or max_tokens, an answer cut at a stop sequence included)',
  },
  streamError: {
    id: 'text.stream.error-event',
    holds: `a stream ended by an error carries the format's error body (chat, responses: error {message, type, code, param, request_id}; messages: type error and error {type, message, code, request_id}), type and code the same, request_id the answer's X-Request-Id (the code, one of ${STREAM_ERROR_CODES.join(', ')}, is the event order's)`,
  },
} as const satisfies Record<string, CheckInfo>;
const C = TEXT_CHECKS;

/** @see reference "Text endpoints (synchronous)", "Streaming", "Conventions" Text call ids */
export function checkTexts(calls: readonly TextCallObservation[], context: CheckContext): Deviation[] {
  const found: Deviation[] = [];
  const owners = new Map<string, TextCallObservation>();
  for (const call of calls) {
    const push = (check: CheckInfo, problem: string, ...others: TextCallObservation[]): void => {
      found.push({ check: check.id, message: `${call.format} call ${named(call)}: ${problem}`, requestIds: idsOf(call, ...others) });
    };
    const answer = readAnswer(call);
    const prefix = ID_PREFIX[call.format];
    const [id, ...rest] = answer.ids;
    if (typeof id !== 'string' || !new RegExp(`^${prefix}[A-Za-z0-9]+$`).test(id)) push(C.id, `id ${JSON.stringify(id)} is not ${prefix}…`);
    else if (rest.some((other) => other !== id)) push(C.id, `the stream carries more than one id`);
    else {
      const owner = owners.get(id);
      if (owner) push(C.id, `id ${id} was already the id of ${named(owner)}`, owner);
      owners.set(id, call);
    }
    if (answer.errored) {
      const problem = streamErrorProblem(call.format, answer.error, call.requestId);
      if (problem) push(C.streamError, problem);
      continue;
    }

    const { inputTokens: input, outputTokens: output, totalTokens: total } = answer;
    if (call.promptNonEmpty && input !== null && input <= 0) push(C.usage, `${input} input tokens for a non-empty prompt`);
    if (total !== null && input !== null && output !== null && total !== input + output) push(C.usage, `total_tokens ${total} is not ${input} + ${output}`);

    const ending = ENDINGS[call.format];
    const stops = ending.stops;
    if (typeof answer.stop !== 'string' || !stops.includes(answer.stop)) push(C.stop, `ends ${JSON.stringify(answer.stop)}, documented: ${stops.join(', ')}`);
    else if (call.format === 'responses') {
      const problem = responsesEndingProblem(answer);
      if (problem) push(C.stop, problem);
    }
    if (output !== null && call.maxTokens !== null) {
      const cut = answer.stop === ending.cut;
      if (output > call.maxTokens) push(C.maximum, `${output} output tokens, maximum ${call.maxTokens}`);
      else if (cut && output !== call.maxTokens) push(C.truncation, `${output} output tokens of at most ${call.maxTokens}, ending ${JSON.stringify(answer.stop)}`);
      // A natural end may fall on the maximum exactly: a cut only when the same generation is seen going on.
      else if (!cut && output === call.maxTokens) {
        const longer = wentOnPast(call, calls);
        if (longer) push(C.truncation, `${output} output tokens of at most ${call.maxTokens}, ending ${JSON.stringify(answer.stop)}, but the same request went on past it from the same text (${named(longer)})`, longer);
      }
    }

    const delivered = answer.delivered;
    if (delivered !== null && output !== null && !answer.toolCall) {
      const expected = context.countOutputTokens?.(delivered);
      if (expected !== undefined ? expected !== output : (delivered.length > 0) !== (output > 0)) {
        push(C.streamUsage, `reports ${output} output tokens for ${delivered.length} delivered characters${expected === undefined ? '' : ` (${expected} tokens)`}`);
      }
    }
  }
  return found;
}

/**
 * What a Responses-style ending says besides its status: an incomplete answer's reason, when it gives one, is
 * documented; a completed one gives none; a stream ends in the event of its status.
 */
function responsesEndingProblem(answer: TextAnswer): string | null {
  const details = answer.incompleteDetails;
  const reason = isRecord(details) ? details.reason : undefined;
  if (answer.stop === 'incomplete' && isRecord(details) && (typeof reason !== 'string' || !INCOMPLETE_REASONS.includes(reason))) {
    return `incomplete for ${JSON.stringify(reason)}, documented: ${INCOMPLETE_REASONS.join(', ')}`;
  }
  if (answer.stop === 'completed' && details !== undefined && details !== null) return `completed with incomplete_details ${JSON.stringify(details)}`;
  if (answer.endEvent !== null && answer.endEvent !== `response.${String(answer.stop)}`) return `the stream ends with ${answer.endEvent} for status ${String(answer.stop)}`;
  return null;
}
