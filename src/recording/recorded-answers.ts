import { parseSse } from '../wire/index.ts';
import { isPlainObject } from '../contract/index.ts';
import { toPieces } from '../text-formats/index.ts';
import type { HarEntry } from './har.ts';
import { parseJson } from './recorded-content.ts';

/**
 * What a recorded text answer says, in each of the three formats, streamed or not: its text in the chunks a
 * scenario replays, how it ended and its usage; or why it cannot be replayed (an error, a tool call, unreadable).
 */

/** The Scenario schema's limits on a recorded answer's chunks, on each chunk and on its stop sequence (openapi/admin.yaml). */
const MAX_CHUNKS = 100_000;
const MAX_CHUNK_LENGTH = 100_000;
const MAX_STOP_SEQUENCE_LENGTH = 100_000;

/** A recorded text answer as the scenario replays it. */
export interface Answer {
  chunks: string[];
  finish: 'stop' | 'length' | 'stop_sequence';
  /** With finish `stop_sequence`: the sequence that ended it. */
  stopSequence?: string;
  /** A Messages-style answer that said so with the Anthropic-native stop_reason `stop_sequence` (not `end_turn`). */
  nativeStopReason?: true;
  inputTokens?: number;
  outputTokens?: number;
  streamed: boolean;
}

/** The answer of a recorded text call, or why it cannot be replayed. */
export function answerOf(entry: HarEntry, format: 'chat' | 'responses' | 'messages'): Answer | string {
  if (entry.response.status < 200 || entry.response.status >= 300) return `error answer (HTTP ${entry.response.status})`;
  const text = entry.response.content.text;
  if (entry._svcEmulator?.truncated || text === undefined) return 'answer not in the recording (over the recorder\'s cap)';
  const streamed = /event-stream/i.test(entry.response.content.mimeType);
  const read = streamed ? readStream(format, parseSse(text)) : readBody(format, parseJson(text));
  if (typeof read === 'string') return read;
  // The answer's text as one content delta a chunk, empty deltas dropped.
  const chunks = streamed ? read.chunks.filter((c) => c !== '') : wordsOf(read.chunks.join(''));
  if (chunks.length > MAX_CHUNKS || chunks.some((c) => c.length > MAX_CHUNK_LENGTH)) return `answer too long for a scenario (over ${MAX_CHUNKS} chunks, or a chunk over ${MAX_CHUNK_LENGTH} characters)`;
  return { ...read, chunks, streamed };
}

/** A non-streamed answer's text in the pieces the emulator streams, trailing white space kept on the last. */
function wordsOf(text: string): string[] {
  const pieces = toPieces(text);
  const rest = text.slice(pieces.join('').length);
  if (rest === '') return pieces;
  if (pieces.length === 0) return [rest];
  pieces[pieces.length - 1] += rest;
  return pieces;
}

type Read = Omit<Answer, 'streamed'> | string;

/** How an answer ended, as a scenario's `finish` and `stop_sequence` replay it. */
type Ending = Pick<Answer, 'finish' | 'stopSequence' | 'nativeStopReason'>;
const STOP: Ending = { finish: 'stop' };
const LENGTH: Ending = { finish: 'length' };

/** What a non-streamed answer says: its text, how it ended, its usage. */
function readBody(format: 'chat' | 'responses' | 'messages', body: unknown): Read {
  if (!isPlainObject(body)) return 'unreadable answer (not JSON)';
  const usage = isPlainObject(body['usage']) ? body['usage'] : {};
  const tokens = (name: string): number | undefined => (Number.isInteger(usage[name]) ? (usage[name] as number) : undefined);
  if (format === 'chat') {
    const choice = Array.isArray(body['choices']) && isPlainObject(body['choices'][0]) ? body['choices'][0] : {};
    const message = isPlainObject(choice['message']) ? choice['message'] : {};
    if (Array.isArray(message['tool_calls']) && message['tool_calls'].length > 0) return 'tool call';
    if (typeof message['content'] !== 'string') return 'unreadable answer (no message content)';
    return withUsage([message['content']], choice['finish_reason'] === 'length' ? LENGTH : STOP, tokens('prompt_tokens'), tokens('completion_tokens'));
  }
  if (format === 'responses') {
    const items = Array.isArray(body['output']) ? body['output'].filter(isPlainObject) : [];
    if (items.some((item) => item['type'] === 'function_call')) return 'tool call';
    if (body['status'] === 'failed' || isPlainObject(body['error'])) return 'error answer (response failed)';
    const texts = items.flatMap((item) => (Array.isArray(item['content']) ? item['content'].filter(isPlainObject) : []))
      .filter((part) => part['type'] === 'output_text' && typeof part['text'] === 'string')
      .map((part) => part['text'] as string);
    return withUsage(texts, body['status'] === 'incomplete' ? LENGTH : STOP, tokens('input_tokens'), tokens('output_tokens'));
  }
  const blocks = Array.isArray(body['content']) ? body['content'].filter(isPlainObject) : [];
  if (blocks.some((block) => block['type'] === 'tool_use')) return 'tool call';
  const texts = blocks.filter((block) => block['type'] === 'text' && typeof block['text'] === 'string').map((block) => block['text'] as string);
  return withUsage(texts, messagesEnding(body), tokens('input_tokens'), tokens('output_tokens'));
}

/**
 * How a Messages-style answer (or a stream's `message_delta`) ended: `max_tokens`, or a stop sequence with the
 * sequence it names (one the Scenario schema takes: 1 to 100,000 characters; else read as a plain stop), said with
 * `end_turn` as the reference has it, or with the Anthropic-native `stop_sequence`, which the replay then keeps.
 */
function messagesEnding(ended: Record<string, unknown>): Ending {
  const reason = ended['stop_reason'];
  if (reason === 'max_tokens') return LENGTH;
  const sequence = ended['stop_sequence'];
  if ((reason === 'end_turn' || reason === 'stop_sequence') && typeof sequence === 'string' && sequence !== '' && sequence.length <= MAX_STOP_SEQUENCE_LENGTH) {
    return { finish: 'stop_sequence', stopSequence: sequence, ...(reason === 'stop_sequence' ? { nativeStopReason: true as const } : {}) };
  }
  return STOP;
}

const withUsage = (chunks: string[], ending: Ending, inputTokens: number | undefined, outputTokens: number | undefined): Omit<Answer, 'streamed'> => ({
  chunks,
  ...ending,
  ...(inputTokens !== undefined ? { inputTokens } : {}),
  ...(outputTokens !== undefined ? { outputTokens } : {}),
});

/** What a stream says: its content deltas in order, how it ended, its usage; an error event or a tool call ends the reading. */
function readStream(format: 'chat' | 'responses' | 'messages', events: { event: string | null; data: string }[]): Read {
  const chunks: string[] = [];
  let ending = STOP;
  let inputTokens: number | undefined;
  let outputTokens: number | undefined;
  const int = (value: unknown): number | undefined => (Number.isInteger(value) ? (value as number) : undefined);
  for (const { event, data } of events) {
    if (data === '[DONE]') continue;
    const json = parseJson(data);
    if (!isPlainObject(json)) return 'unreadable answer (an event that is not JSON)';
    const type = typeof json['type'] === 'string' ? json['type'] : event;
    if (event === 'error' || type === 'error' || type === 'response.failed' || (format === 'chat' && isPlainObject(json['error']))) return 'error mid-stream';
    if (format === 'chat') {
      const choice = Array.isArray(json['choices']) && isPlainObject(json['choices'][0]) ? json['choices'][0] : {};
      const delta = isPlainObject(choice['delta']) ? choice['delta'] : {};
      if (Array.isArray(delta['tool_calls'])) return 'tool call';
      if (typeof delta['content'] === 'string') chunks.push(delta['content']);
      if (choice['finish_reason'] === 'length') ending = LENGTH;
      if (isPlainObject(json['usage'])) {
        inputTokens = int(json['usage']['prompt_tokens']) ?? inputTokens;
        outputTokens = int(json['usage']['completion_tokens']) ?? outputTokens;
      }
    } else if (format === 'responses') {
      if (type === 'response.output_text.delta' && typeof json['delta'] === 'string') chunks.push(json['delta']);
      if (type === 'response.function_call_arguments.delta' || (isPlainObject(json['item']) && json['item']['type'] === 'function_call')) return 'tool call';
      if ((type === 'response.completed' || type === 'response.incomplete') && isPlainObject(json['response'])) {
        ending = type === 'response.incomplete' ? LENGTH : STOP;
        const usage = isPlainObject(json['response']['usage']) ? json['response']['usage'] : {};
        inputTokens = int(usage['input_tokens']);
        outputTokens = int(usage['output_tokens']);
      }
    } else {
      if (type === 'content_block_start' && isPlainObject(json['content_block']) && json['content_block']['type'] === 'tool_use') return 'tool call';
      const delta = isPlainObject(json['delta']) ? json['delta'] : {};
      if (type === 'content_block_delta' && delta['type'] === 'text_delta' && typeof delta['text'] === 'string') chunks.push(delta['text']);
      if (type === 'message_start' && isPlainObject(json['message']) && isPlainObject(json['message']['usage'])) inputTokens = int(json['message']['usage']['input_tokens']);
      if (type === 'message_delta') {
        ending = messagesEnding(delta);
        if (isPlainObject(json['usage'])) outputTokens = int(json['usage']['output_tokens']) ?? outputTokens;
      }
    }
  }
  return withUsage(chunks, ending, inputTokens, outputTokens);
}
