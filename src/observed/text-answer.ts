import type { TextCallObservation, TextFormat } from './history.ts';
import { isRecord } from './task-view.ts';

/** What the rules need of a text answer, whichever format and whether streamed. */
export interface TextAnswer {
  /** Every id the answer carried (each chunk of a chat stream has one). */
  ids: unknown[];
  /** finish_reason, status or stop_reason; undefined when the answer gave none. */
  stop: unknown;
  inputTokens: number | null;
  outputTokens: number | null;
  totalTokens: number | null;
  /** A stream's delivered text; null for whole answers. */
  delivered: string | null;
  /** The answer carries a tool call (its tokens are no delivered text). */
  toolCall: boolean;
  /** The stream ended with an error event: its usage and ending are not judged. */
  errored: boolean;
  /** The error event's data (parsed), when the stream ended with one. */
  error: unknown;
  /** Responses: `incomplete_details` of the final answer (undefined when it gave none). */
  incompleteDetails: unknown;
  /** Responses stream: the name (`type`) of the event that carried the final status. */
  endEvent: string | null;
}

/**
 * The documented endings per format: `natural` the one of an answer that ended by itself, `cut` the one that says
 * it reached the maximum. A Responses-style answer that is incomplete says why in `incomplete_details.reason`.
 * @see reference "Streaming" (response.incomplete when output was truncated; stop_reason end_turn or max_tokens);
 *   openapi/service.yaml ChatCompletion.finish_reason, ResponseObject.status, MessageObject.stop_reason
 */
export const ENDINGS: Readonly<Record<TextFormat, { stops: readonly string[]; natural: string; cut: string }>> = {
  chat: { stops: ['stop', 'length', 'tool_calls', 'content_filter'], natural: 'stop', cut: 'length' },
  responses: { stops: ['completed', 'incomplete'], natural: 'completed', cut: 'incomplete' },
  messages: { stops: ['end_turn', 'max_tokens'], natural: 'end_turn', cut: 'max_tokens' },
};

/**
 * Why a Responses-style answer is incomplete: the maximum (`max_output_tokens`), or the filter the Chat style also
 * names (`content_filter`). The reference names only truncation; these are the Responses API's own two words.
 */
export const INCOMPLETE_REASONS: readonly string[] = ['max_output_tokens', 'content_filter'];

export const ID_PREFIX: Readonly<Record<TextFormat, string>> = { chat: 'svcchat_', responses: 'svcresp_', messages: 'svcmsg_' };

const num = (value: unknown): number | null => (typeof value === 'number' && Number.isFinite(value) ? value : null);
const rec = (value: unknown): Record<string, unknown> => (isRecord(value) ? value : {});

export function readAnswer(call: TextCallObservation): TextAnswer {
  const answer: TextAnswer = {
    ids: [],
    stop: undefined,
    inputTokens: null,
    outputTokens: null,
    totalTokens: null,
    delivered: null,
    toolCall: false,
    errored: false,
    error: undefined,
    incompleteDetails: undefined,
    endEvent: null,
  };
  const usage = (u: Record<string, unknown>, input: string, output: string): void => {
    answer.inputTokens = num(u[input]) ?? answer.inputTokens;
    answer.outputTokens = num(u[output]) ?? answer.outputTokens;
    answer.totalTokens = num(u.total_tokens) ?? answer.totalTokens;
  };
  if (!call.streamed) {
    const body = rec(call.body);
    answer.ids.push(body.id);
    if (call.format === 'chat') {
      const choice = rec(Array.isArray(body.choices) ? body.choices[0] : undefined);
      answer.stop = choice.finish_reason;
      answer.toolCall = Array.isArray(rec(choice.message).tool_calls);
      usage(rec(body.usage), 'prompt_tokens', 'completion_tokens');
    } else {
      answer.stop = call.format === 'responses' ? body.status : body.stop_reason;
      if (call.format === 'responses') answer.incompleteDetails = body.incomplete_details;
      usage(rec(body.usage), 'input_tokens', 'output_tokens');
    }
    return answer;
  }
  answer.delivered = '';
  for (const raw of call.events) {
    const event = rec(raw);
    if (event.error !== undefined || event.type === 'error') {
      answer.errored = true;
      answer.error = raw;
    }
    if (call.format === 'chat') {
      if (event.object !== 'chat.completion.chunk') continue;
      answer.ids.push(event.id);
      for (const choice of Array.isArray(event.choices) ? event.choices.map(rec) : []) {
        const delta = rec(choice.delta);
        if (typeof delta.content === 'string') answer.delivered += delta.content;
        if (Array.isArray(delta.tool_calls)) answer.toolCall = true;
        if (typeof choice.finish_reason === 'string') answer.stop = choice.finish_reason;
      }
      if (isRecord(event.usage)) usage(event.usage, 'prompt_tokens', 'completion_tokens');
    } else if (call.format === 'responses') {
      if (isRecord(event.response)) answer.ids.push(event.response.id);
      if (event.type === 'response.output_text.delta' && typeof event.delta === 'string') answer.delivered += event.delta;
      if ((event.type === 'response.completed' || event.type === 'response.incomplete') && isRecord(event.response)) {
        answer.stop = event.response.status;
        answer.incompleteDetails = event.response.incomplete_details;
        answer.endEvent = event.type;
        usage(rec(event.response.usage), 'input_tokens', 'output_tokens');
      }
    } else {
      if (event.type === 'message_start') {
        const message = rec(event.message);
        answer.ids.push(message.id);
        usage(rec(message.usage), 'input_tokens', 'output_tokens');
      }
      if (event.type === 'content_block_delta' && typeof rec(event.delta).text === 'string') answer.delivered += rec(event.delta).text as string;
      if (event.type === 'message_delta') {
        answer.stop = rec(event.delta).stop_reason;
        usage(rec(event.usage), 'input_tokens', 'output_tokens');
      }
    }
  }
  return answer;
}
