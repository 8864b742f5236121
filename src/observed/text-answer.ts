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
}

/** The documented endings per format; `cut` is the one that says the answer reached the maximum. @see openapi/service.yaml */
export const ENDINGS: Readonly<Record<TextFormat, { stops: readonly string[]; cut: string }>> = {
  chat: { stops: ['stop', 'length', 'tool_calls', 'content_filter'], cut: 'length' },
  responses: { stops: ['completed', 'incomplete'], cut: 'incomplete' },
  messages: { stops: ['end_turn', 'max_tokens'], cut: 'max_tokens' },
};

export const ID_PREFIX: Readonly<Record<TextFormat, string>> = { chat: 'svcchat_', responses: 'svcresp_', messages: 'svcmsg_' };

const num = (value: unknown): number | null => (typeof value === 'number' && Number.isFinite(value) ? value : null);
const rec = (value: unknown): Record<string, unknown> => (isRecord(value) ? value : {});

export function readAnswer(call: TextCallObservation): TextAnswer {
  const answer: TextAnswer = { ids: [], stop: undefined, inputTokens: null, outputTokens: null, totalTokens: null, delivered: null, toolCall: false, errored: false };
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
      usage(rec(body.usage), 'input_tokens', 'output_tokens');
    }
    return answer;
  }
  answer.delivered = '';
  for (const raw of call.events) {
    const event = rec(raw);
    if (event.error !== undefined || event.type === 'error') answer.errored = true;
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
