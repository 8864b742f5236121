import { eventTemplate, slot, wire } from './sse.ts';
import type { WireEvent } from './sse.ts';
import { textOf } from './text-of.ts';
import type { TextCallView, TextFormat } from './types.ts';

interface ResponsesBody {
  model: string;
  input: string | { role: string; content: unknown }[];
  instructions?: string | null;
  max_output_tokens?: number | null;
  temperature?: number | null;
  top_p?: number | null;
  stream?: boolean | null;
}

/**
 * @see reference "POST /v1/responses" and "Streaming" (Responses-style): no server-side storage (`store` is
 * always false); every event has a sequence_number.
 */
export const responsesFormat: TextFormat = {
  name: 'responses',
  requestSchema: 'ResponseRequest',
  idPrefix: 'svcresp_',
  parse(raw) {
    const body = raw as unknown as ResponsesBody;
    const messages = typeof body.input === 'string' ? [{ role: 'user', text: body.input }] : body.input.map((m) => ({ role: m.role, text: textOf(m.content) }));
    const prompt = [...(body.instructions ? [body.instructions] : []), ...messages.map((m) => m.text)];
    const system = [...(body.instructions ? [body.instructions] : []), ...messages.filter((m) => m.role === 'system' || m.role === 'developer').map((m) => m.text)];
    return {
      request: {
        model: body.model,
        prompt,
        stop: [],
        seed: null,
        responseFormat: null,
        forcedTool: null,
      },
      requestedMax: body.max_output_tokens ?? null,
      stream: body.stream === true,
      includeUsage: false,
      // The reference gives this format no tools and no response format.
      view: {
        format: 'responses',
        model: body.model,
        stream: body.stream === true,
        system: system.length > 0 ? system.join('\n') : null,
        messages: prompt,
        lastUser: messages.findLast((m) => m.role === 'user')?.text ?? null,
        tools: [],
        toolChoice: 'none',
        responseFormat: { type: 'text', name: null, schema: null },
        lastToolResult: null,
        assistantTurns: messages.filter((m) => m.role === 'assistant').length,
      },
    };
  },
  body: (call) => response(call, 'final'),
  *events(call) {
    const itemId = messageId(call);
    // Read once the first events are out: the answer is made when first read.
    const text = (): string => call.generated.pieces.join('');
    const part = (done: boolean) => ({ type: 'output_text', text: done ? text() : '', annotations: [] });
    const at = { item_id: itemId, output_index: 0, content_index: 0 };
    // Every event's data starts with its name as `type` and its place in the stream as `sequence_number`.
    let sequence = 0;
    const event = (name: string, data: object): WireEvent => wire({ event: name, data: { type: name, sequence_number: sequence++, ...data } });
    yield event('response.created', { response: response(call, 'in_progress') });
    yield event('response.in_progress', { response: response(call, 'in_progress') });
    yield event('response.output_item.added', { output_index: 0, item: item(call, 'in_progress') });
    yield event('response.content_part.added', { ...at, part: part(false) });
    const name = 'response.output_text.delta';
    const delta = eventTemplate({ event: name, data: { type: name, sequence_number: slot(0), ...at, delta: slot(1), logprobs: [] } }, 2);
    for (const piece of call.generated.pieces) yield { text: delta(sequence++, piece), tokens: 1 };
    yield event('response.output_text.done', { ...at, text: text(), logprobs: [] });
    yield event('response.content_part.done', { ...at, part: part(true) });
    yield event('response.output_item.done', { output_index: 0, item: item(call, 'final') });
    const final = response(call, 'final');
    yield event(final['status'] === 'incomplete' ? 'response.incomplete' : 'response.completed', { response: final });
  },
  errorEvents(errorBody, nextSequence) {
    return [{ event: 'error', data: { type: 'error', sequence_number: nextSequence, ...errorBody } }];
  },
};

const messageId = (call: TextCallView): string => `msg_${call.id.slice('svcresp_'.length)}`;
const truncated = (call: TextCallView): boolean => call.generated.finish === 'length';

function item(call: TextCallView, stage: 'in_progress' | 'final'): Record<string, unknown> {
  const done = stage === 'final';
  return {
    id: messageId(call),
    type: 'message',
    status: !done ? 'in_progress' : truncated(call) ? 'incomplete' : 'completed',
    role: 'assistant',
    content: done ? [{ type: 'output_text', text: call.generated.pieces.join(''), annotations: [] }] : [],
  };
}

function response(call: TextCallView, stage: 'in_progress' | 'final'): Record<string, unknown> {
  const done = stage === 'final';
  return {
    id: call.id,
    object: 'response',
    created_at: call.createdSeconds,
    status: !done ? 'in_progress' : truncated(call) ? 'incomplete' : 'completed',
    error: null,
    incomplete_details: done && truncated(call) ? { reason: 'max_output_tokens' } : null,
    instructions: call.echo['instructions'] ?? null,
    max_output_tokens: call.echo['max_output_tokens'] ?? null,
    model: call.model,
    output: done ? [item(call, 'final')] : [],
    parallel_tool_calls: false,
    temperature: call.echo['temperature'] ?? null,
    top_p: call.echo['top_p'] ?? null,
    tool_choice: 'none',
    tools: [],
    store: false,
    usage: done ? usage(call) : null,
  };
}

function usage(call: TextCallView): Record<string, unknown> {
  const { inputTokens, outputTokens } = call.generated;
  return {
    input_tokens: inputTokens,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: outputTokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: inputTokens + outputTokens,
  };
}
