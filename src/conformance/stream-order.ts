import { textFormatOf } from '../text-formats/index.ts';
import type { TextFormat } from '../text-formats/index.ts';
import type { AnswerDeviation } from './answers.ts';
import { parseJson } from '../wire/index.ts';
import type { StreamEvent } from '../wire/index.ts';
import { isPlainObject } from '../contract/index.ts';

/** The three text formats, each with its own event order. */
export type StreamFormat = TextFormat['name'];

/** What of the request changes what a stream may hold; a field left out is not known, and allows either. */
export interface StreamRequest {
  /** Chat: `stream_options.include_usage` was true, so a usage chunk must come (false: none may). */
  includeUsage?: boolean;
  /** Messages: `stop_sequences` were sent, so the stream may stop on one (and say so) before any text. */
  stopSequences?: boolean;
  /**
   * True: the answer may have no text at all, so no content delta in any format (a model may end before its first
   * token; the emulator's `text: ''` and a recorded `chunks: []` do). The proxy sees any answer; the suite, which
   * asks for text, leaves it out: then only a Messages stream that sent stop sequences may be empty.
   */
  emptyAllowed?: boolean;
}

/** The check each format's order belongs to, in the suite and in the proxy. */
export const STREAM_ORDER_CHECKS: Record<StreamFormat, string> = {
  chat: 'text.chat.stream.order',
  responses: 'text.responses.stream.order',
  messages: 'text.messages.stream.order',
};

/**
 * The named events of two formats, as x-event-order in openapi/service.yaml has them: `a|b` either, `*` one or
 * more. Chat's chunks are unnamed, so its order is checked by what each chunk holds.
 */
export const EVENT_ORDER: Record<'responses' | 'messages', string[]> = {
  responses: [
    'response.created',
    'response.in_progress',
    'response.output_item.added',
    'response.content_part.added',
    'response.output_text.delta*',
    'response.output_text.done',
    'response.content_part.done',
    'response.output_item.done',
    'response.completed|response.incomplete',
  ],
  messages: ['message_start', 'content_block_start', 'ping', 'content_block_delta*', 'content_block_stop', 'message_delta', 'message_stop'],
};

/** The codes a stream may end with in an error event. @see reference "Streaming" */
export const MID_STREAM_ERROR_CODES = ['service_unavailable', 'content_rejected', 'invalid_params'];

/** The stop reasons of a message, stop sequences sent or not (one cut at a sequence is `end_turn`). @see reference "Streaming" (Messages-style) */
export const MESSAGE_STOP_REASONS = ['end_turn', 'max_tokens'];

/** The format of a text endpoint's path (a query is ignored), or null for any other path. */
export const streamFormatOf = (path: string): StreamFormat | null => textFormatOf(path)?.name ?? null;

/** What a request body says about its stream; nothing when the body cannot be read. */
export function streamRequestOf(format: StreamFormat, requestBody: string | undefined): StreamRequest {
  const body = parseJson(requestBody ?? '');
  if (!isPlainObject(body)) return {};
  if (format === 'chat') return { includeUsage: isPlainObject(body['stream_options']) && body['stream_options']['include_usage'] === true };
  if (format === 'messages') return { stopSequences: Array.isArray(body['stop_sequences']) && body['stop_sequences'].length > 0 };
  return {};
}

/**
 * How a stream departs from its format's documented event order, under the format's check id: empty when it keeps
 * it, else the first departure (one fault shows in several places, a swapped pair in the order and the sequence
 * numbers alike; the first is the one to fix). A stream may also end early as documented: after any part of the
 * order, the format's error event (in Chat Completions-style a `data:` error body, then `data: [DONE]`) with one
 * of the documented codes. A stream cut at the maximum ends as documented too (finish_reason length,
 * response.incomplete, stop_reason max_tokens).
 * @see reference "Streaming"
 */
export function streamOrderProblems(format: StreamFormat, events: StreamEvent[], request: StreamRequest = {}): AnswerDeviation[] {
  const problem = format === 'chat' ? chatProblem(events, request) : namedProblem(format, events, request);
  return problem ? [{ check: STREAM_ORDER_CHECKS[format], ...problem }] : [];
}

/** The error a stream ends with, as its data (parsed), or null for a stream that ends as a whole one does. */
export function streamError(format: StreamFormat, events: StreamEvent[]): unknown {
  if (format === 'chat') {
    if (events.at(-1)?.data !== '[DONE]') return null;
    const body = parseJson(events.at(-2)?.data ?? '');
    return isPlainObject(body) && 'error' in body ? body : null;
  }
  const last = events.at(-1);
  return last?.event === 'error' ? (parseJson(last.data) ?? last.data) : null;
}

type Problem = Omit<AnswerDeviation, 'check'>;

/** Chat: role chunk, content chunks, finish_reason on the last, a usage chunk when asked for, then [DONE]. */
function chatProblem(events: StreamEvent[], request: StreamRequest): Problem | null {
  const last = events.at(-1)?.data;
  if (last !== '[DONE]') return { message: 'ends with data: [DONE]', expected: '[DONE]', actual: last };
  const chunks: Record<string, unknown>[] = [];
  for (const [i, e] of events.slice(0, -1).entries()) {
    if (e.data === '[DONE]') return { message: 'data: [DONE] only once, at the end', expected: 'one [DONE], last', actual: `[DONE] at event ${i}` };
    const chunk = parseJson(e.data);
    if (!isPlainObject(chunk)) return { message: `event ${i} is a JSON object`, expected: 'a JSON object', actual: e.data.slice(0, 200) };
    chunks.push(chunk);
  }
  const error = streamError('chat', events);
  if (error !== null) chunks.pop();
  const choices = chunks.map((c) => (Array.isArray(c['choices']) ? (c['choices'][0] as { delta?: { role?: unknown }; finish_reason?: unknown } | undefined) : undefined));
  const first = choices[0];
  if ((chunks.length > 0 || error === null) && first?.delta?.role !== 'assistant') return { message: 'the first chunk has delta.role', expected: 'assistant', actual: first?.delta };
  if (error !== null) {
    // Cut off by the error before the end: nothing has finished yet.
    const finishes = choices.slice(1).map((c) => c?.finish_reason);
    if (!finishes.every((f) => f === null)) return { message: 'no finish_reason before the error', expected: 'null', actual: finishes };
    return errorCodeProblem(error);
  }
  const tail = chunks.at(-1);
  const isUsage = chunks.length > 1 && Array.isArray(tail?.['choices']) && tail['choices'].length === 0 && tail['usage'] !== undefined;
  if (request.includeUsage === true && !isUsage) return { message: 'a last chunk with empty choices and usage', expected: 'usage chunk', actual: tail };
  if (request.includeUsage === false && isUsage) return { message: 'no usage chunk without stream_options.include_usage', expected: 'no usage chunk', actual: tail };
  const finishes = choices.slice(1, isUsage ? -1 : undefined).map((c) => c?.finish_reason);
  const lastFinish = finishes.at(-1);
  if (finishes.length === 0 || !finishes.slice(0, -1).every((f) => f === null) || lastFinish === null || lastFinish === undefined) {
    return { message: 'finish_reason on the last content chunk only', expected: 'finish_reason last', actual: finishes };
  }
  return null;
}

/** Responses and Messages: named events in the documented order, and what the order itself says of them. */
function namedProblem(format: 'responses' | 'messages', events: StreamEvent[], request: StreamRequest): Problem | null {
  const names = events.map((e) => e.event ?? '');
  const error = streamError(format, events);
  // Text may be empty where the caller allows it, or where a stop sequence can end it before it starts.
  const empty = request.emptyAllowed === true || (format === 'messages' && request.stopSequences !== false);
  const order = empty ? EVENT_ORDER[format].map((n) => n.replace(/\*$/, '?*')) : EVENT_ORDER[format];
  const broken = orderProblem(names, order, error !== null);
  if (broken) return broken;
  if (format === 'responses') {
    const sequence = events.map((e) => {
      const data = parseJson(e.data);
      return isPlainObject(data) ? data['sequence_number'] : undefined;
    });
    if (!sequence.every((n, i) => n === i)) return { message: 'sequence_number 0, 1, 2, …', expected: 'in order', actual: sequence };
  }
  if (error !== null) return errorCodeProblem(error);
  if (format === 'messages') {
    const data = parseJson(events[names.indexOf('message_delta')]?.data ?? '');
    const delta = isPlainObject(data) ? data['delta'] : undefined;
    const reason = isPlainObject(delta) ? delta['stop_reason'] : undefined;
    if (typeof reason !== 'string' || !MESSAGE_STOP_REASONS.includes(reason)) {
      return { message: 'message_delta has stop_reason', expected: MESSAGE_STOP_REASONS.join('|'), actual: delta };
    }
  }
  return null;
}

/**
 * `names` against `order` (`a|b` either, `*` one or more, `?*` none or more); with `errorEnds` the last name is the
 * error event, which may follow any part of the order but not the whole of it.
 */
function orderProblem(names: string[], order: string[], errorEnds: boolean): Problem | null {
  const end = errorEnds ? names.length - 1 : names.length;
  let i = 0;
  for (const name of order) {
    if (errorEnds && i === end) return null;
    const bare = name.replace(/\??\*$/, '');
    const alternatives = bare.split('|');
    if (!alternatives.includes(names[i] ?? '')) {
      if (name.endsWith('?*')) continue;
      return { message: `event ${i} is ${bare}`, expected: bare, actual: names[i] };
    }
    i += 1;
    while (name.endsWith('*') && i < end && alternatives.includes(names[i] ?? '')) i += 1;
  }
  if (i !== names.length) return { message: 'nothing after the last event', expected: order, actual: names };
  return null;
}

/** A mid-stream error carries the format's error body, with one of the codes the reference names for it. */
function errorCodeProblem(error: unknown): Problem | null {
  const inner = isPlainObject(error) && isPlainObject(error['error']) ? error['error'] : null;
  const code = inner ? (inner['code'] ?? inner['type']) : undefined;
  if (typeof code === 'string' && MID_STREAM_ERROR_CODES.includes(code)) return null;
  return { message: 'a mid-stream error has the error body of the format and a documented code', expected: MID_STREAM_ERROR_CODES.join('|'), actual: inner ? code : error };
}

