import { ApiError } from '../errors/index.ts';
import { eventTemplate, slot, wire } from './sse.ts';
import type { TextFormat, TextCallView } from './types.ts';
import { textOf } from './text-of.ts';

interface ChatBody {
  messages: { role: string; content?: unknown }[];
  max_tokens?: number | null;
  max_completion_tokens?: number | null;
  stop?: string | string[] | null;
  seed?: number | null;
  stream?: boolean | null;
  stream_options?: { include_usage?: boolean } | null;
  response_format?: { type: 'text' | 'json_object' | 'json_schema'; json_schema?: { schema?: Record<string, unknown> } };
  tools?: { function: { name: string; parameters?: Record<string, unknown> } }[];
  tool_choice?: string | { function: { name: string } };
  model: string;
}

const FINISH = { stop: 'stop', stop_sequence: 'stop', length: 'length', tool_calls: 'tool_calls' } as const;

/** @see reference "POST /v1/chat/completions" and "Streaming" (Chat Completions-style) */
export const chatFormat: TextFormat = {
  name: 'chat',
  requestSchema: 'ChatCompletionRequest',
  idPrefix: 'svcchat_',
  parse(raw) {
    const body = raw as unknown as ChatBody;
    const stop = body.stop === undefined || body.stop === null ? [] : ([] as string[]).concat(body.stop);
    const format = body.response_format;
    return {
      request: {
        model: body.model,
        prompt: body.messages.map((m) => textOf(m.content)),
        stop,
        seed: body.seed ?? null,
        responseFormat: format && format.type !== 'text' ? { type: format.type, ...(format.json_schema?.schema ? { schema: format.json_schema.schema } : {}) } : null,
        forcedTool: forcedTool(body),
      },
      requestedMax: body.max_completion_tokens ?? body.max_tokens ?? null,
      stream: body.stream === true,
      includeUsage: body.stream_options?.include_usage === true,
    };
  },
  body(call) {
    const { generated } = call;
    return {
      id: call.id,
      object: 'chat.completion',
      created: call.createdSeconds,
      model: call.model,
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: generated.toolCall ? null : generated.pieces.join(''),
            refusal: null,
            ...(generated.toolCall ? { tool_calls: [toolCall(call)] } : {}),
          },
          logprobs: null,
          finish_reason: FINISH[generated.finish],
        },
      ],
      usage: usage(call),
    };
  },
  *events(call) {
    const { generated } = call;
    const chunk = (delta: Record<string, unknown>, finish: string | null): Record<string, unknown> => ({
      id: call.id,
      object: 'chat.completion.chunk',
      created: call.createdSeconds,
      model: call.model,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    });
    const finish = FINISH[generated.finish];
    yield wire({ data: chunk({ role: 'assistant', content: generated.toolCall ? null : '' }, null) });
    if (generated.toolCall) {
      const { id, function: fn } = toolCall(call);
      yield wire({ data: chunk({ tool_calls: [{ index: 0, id, type: 'function', function: { name: fn.name, arguments: '' } }] }, null) });
      yield wire({ data: chunk({ tool_calls: [{ index: 0, function: { arguments: fn.arguments } }] }, finish), tokens: generated.outputTokens });
    } else if (generated.pieces.length === 0) {
      yield wire({ data: chunk({}, finish) });
    } else {
      // Every content chunk but the last is the same JSON around its piece; the last carries finish_reason.
      const content = eventTemplate({ data: chunk({ content: slot(0) }, null) }, 1);
      const last = generated.pieces.length - 1;
      for (let i = 0; i < last; i++) yield { text: content(generated.pieces[i]), tokens: 1 };
      yield wire({ data: chunk({ content: generated.pieces[last] }, finish), tokens: 1 });
    }
    if (call.includeUsage) yield wire({ data: { ...chunk({}, null), choices: [], usage: usage(call) } });
    yield wire({ data: '[DONE]' });
  },
  errorEvents(errorBody) {
    return [{ data: errorBody }, { data: '[DONE]' }];
  },
};

function forcedTool(body: ChatBody): { name: string; parameters?: Record<string, unknown> } | null {
  const tools = body.tools ?? [];
  const choice = body.tool_choice;
  const named = typeof choice === 'object' ? choice.function.name : choice === 'required' ? tools[0]?.function.name : undefined;
  if (named === undefined) return null;
  const tool = tools.find((t) => t.function.name === named);
  if (!tool) {
    throw new ApiError('invalid_params', `tool_choice names '${named}', which is not in tools`, [
      { field: 'tool_choice', message: `names '${named}', which is not in tools` },
    ]);
  }
  return { name: tool.function.name, ...(tool.function.parameters ? { parameters: tool.function.parameters } : {}) };
}

function toolCall(call: TextCallView): { id: string; type: 'function'; function: { name: string; arguments: string } } {
  const tool = call.generated.toolCall ?? { name: '', arguments: '{}' };
  return { id: `call_${call.id.slice('svcchat_'.length)}`, type: 'function', function: tool };
}

function usage(call: TextCallView): Record<string, number> {
  const { inputTokens, outputTokens } = call.generated;
  return { prompt_tokens: inputTokens, completion_tokens: outputTokens, total_tokens: inputTokens + outputTokens };
}
