import type { TextCallObservation } from './history.ts';
import { isRecord } from './task-view.ts';
import { readAnswer } from './text-answer.ts';

/** Fields that do not change what is generated, only how much of it comes and how: left out of a request's key. */
const NOT_GENERATION = new Set(['max_tokens', 'max_completion_tokens', 'max_output_tokens', 'stream', 'stream_options']);

/**
 * A text request's key: the body as sent but for its maximum and its streaming, in a canonical form. Two calls with
 * the same key asked for the same generation, however much of it each allowed.
 */
export function textRequestKey(sent: Readonly<Record<string, unknown>>): string {
  return canonical(Object.fromEntries(Object.entries(sent).filter(([field]) => !NOT_GENERATION.has(field))));
}

/**
 * A call of the same request whose answer went on past this call's maximum from the same text: evidence that this
 * answer, ending naturally at exactly its maximum, was cut there. A natural end at exactly the maximum is no cut by
 * itself; a longer answer beginning with this one's whole text shows the generation did not end where it stopped.
 * @see reference "Text billing" 2 (the maximum), "Streaming" (response.incomplete "when output was truncated")
 */
export function wentOnPast(call: TextCallObservation, calls: readonly TextCallObservation[]): TextCallObservation | null {
  if (call.request === undefined || call.maxTokens === null) return null;
  const text = answerText(call);
  if (text === null || text === '') return null;
  for (const other of calls) {
    if (other === call || other.request !== call.request || other.format !== call.format) continue;
    const answer = readAnswer(other);
    const longer = answerText(other);
    if (answer.errored || answer.outputTokens === null || answer.outputTokens <= call.maxTokens || longer === null) continue;
    if (longer.length > text.length && longer.startsWith(text)) return other;
  }
  return null;
}

/** The text an answer delivered, whole or streamed; null when it carries none to read (a tool call, say). */
function answerText(call: TextCallObservation): string | null {
  if (call.streamed) {
    const answer = readAnswer(call);
    return answer.toolCall ? null : answer.delivered;
  }
  const body = isRecord(call.body) ? call.body : {};
  const texts = (blocks: unknown, field: string): string[] =>
    (Array.isArray(blocks) ? blocks : []).flatMap((b) => (isRecord(b) && typeof b[field] === 'string' ? [b[field]] : []));
  if (call.format === 'chat') {
    const choice = Array.isArray(body.choices) && isRecord(body.choices[0]) ? body.choices[0] : {};
    const message = isRecord(choice.message) ? choice.message : {};
    return typeof message.content === 'string' && !Array.isArray(message.tool_calls) ? message.content : null;
  }
  if (call.format === 'messages') return texts(body.content, 'text').join('');
  const parts = (Array.isArray(body.output) ? body.output : []).flatMap((item) => (isRecord(item) ? texts(item.content, 'text') : []));
  return parts.join('');
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (isRecord(value)) return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`).join(',')}}`;
  return JSON.stringify(value) ?? 'null';
}
