import { eventTemplate, slot, wire } from './sse.ts';
import type { WireEvent } from './sse.ts';
import { textOf } from './text-of.ts';
import type { TextCallView, TextFormat } from './types.ts';

interface MessagesBody {
  model: string;
  max_tokens: number;
  system?: unknown;
  messages: { role: string; content: unknown }[];
  stop_sequences?: string[];
  stream?: boolean;
}

/**
 * The reference allows `end_turn` or `max_tokens` only: an answer cut at a stop sequence is `end_turn` (with the
 * sequence in `stop_sequence`, as the format has it), unless the call's scenario asks for the Anthropic-native value.
 * @see reference "Streaming" (Messages-style: stop_reason)
 */
const stopReason = (call: TextCallView): string => {
  const { finish } = call.generated;
  if (finish === 'length') return 'max_tokens';
  return finish === 'stop_sequence' ? call.stopSequenceReason : 'end_turn';
};

/** @see reference "POST /v1/messages" and "Streaming" (Messages-style) */
export const messagesFormat: TextFormat = {
  name: 'messages',
  requestSchema: 'MessageRequest',
  idPrefix: 'svcmsg_',
  parse(raw) {
    const body = raw as unknown as MessagesBody;
    const system = body.system === undefined ? [] : [textOf(body.system)];
    const prompt = [...system, ...body.messages.map((m) => textOf(m.content))];
    const lastUser = body.messages.findLast((m) => m.role === 'user');
    return {
      request: {
        model: body.model,
        prompt,
        stop: body.stop_sequences ?? [],
        seed: null,
        responseFormat: null,
        forcedTool: null,
      },
      requestedMax: body.max_tokens,
      stream: body.stream === true,
      includeUsage: false,
      // The reference gives this format no tools (and so no tool results) and no response format.
      view: {
        format: 'messages',
        model: body.model,
        stream: body.stream === true,
        system: system[0] ?? null,
        messages: prompt,
        lastUser: lastUser ? textOf(lastUser.content) : null,
        tools: [],
        toolChoice: 'none',
        responseFormat: { type: 'text', name: null, schema: null },
        lastToolResult: null,
        assistantTurns: body.messages.filter((m) => m.role === 'assistant').length,
      },
    };
  },
  body(call) {
    return {
      ...message(call),
      content: [{ type: 'text', text: call.generated.pieces.join('') }],
      stop_reason: stopReason(call),
      stop_sequence: call.generated.stopSequence,
      usage: { input_tokens: call.generated.inputTokens, output_tokens: call.generated.outputTokens },
    };
  },
  *events(call) {
    // Every event's data starts with its own name as `type`.
    const event = (name: string, data: object, tokens?: number): WireEvent => wire({ event: name, data: { type: name, ...data }, ...(tokens ? { tokens } : {}) });
    yield event('message_start', {
      message: { ...message(call), content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: call.opening.inputTokens, output_tokens: 0 } },
    });
    yield event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
    yield event('ping', {});
    const delta = eventTemplate({ event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: slot(0) } } }, 1);
    for (const text of call.generated.pieces) yield { text: delta(text), tokens: 1 };
    yield event('content_block_stop', { index: 0 });
    yield event('message_delta', {
      delta: { stop_reason: stopReason(call), stop_sequence: call.generated.stopSequence },
      usage: { output_tokens: call.generated.outputTokens },
    });
    yield event('message_stop', {});
  },
  errorEvents(errorBody) {
    return [{ event: 'error', data: errorBody }];
  },
};

function message(call: TextCallView): Record<string, unknown> {
  return { id: call.id, type: 'message', role: 'assistant', model: call.model };
}
