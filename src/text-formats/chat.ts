import { ApiError } from '../errors/index.ts';
import { eventTemplate, slot, wire } from './sse.ts';
import type { TextFormat, TextCallView, TextView } from './types.ts';
import { textOf } from './text-of.ts';

interface ChatMessage {
  role: string;
  content?: unknown;
  name?: string;
  tool_call_id?: string;
  tool_calls?: unknown[];
}

interface ChatBody {
  messages: ChatMessage[];
  max_tokens?: number | null;
  max_completion_tokens?: number | null;
  stop?: string | string[] | null;
  seed?: number | null;
  stream?: boolean | null;
  stream_options?: { include_usage?: boolean } | null;
  response_format?: { type: 'text' | 'json_object' | 'json_schema'; json_schema?: { name?: string; schema?: Record<string, unknown> } };
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
    const prompt = body.messages.map((m) => textOf(m.content));
    return {
      request: {
        model: body.model,
        prompt,
        stop,
        seed: body.seed ?? null,
        responseFormat: format && format.type !== 'text' ? { type: format.type, ...(format.json_schema?.schema ? { schema: format.json_schema.schema } : {}) } : null,
        forcedTool: forcedTool(body),
      },
      requestedMax: body.max_completion_tokens ?? body.max_tokens ?? null,
      stream: body.stream === true,
      includeUsage: body.stream_options?.include_usage === true,
      view: chatView(body, prompt),
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
            content: generated.toolCalls.length > 0 ? null : generated.pieces.join(''),
            refusal: null,
            ...(generated.toolCalls.length > 0 ? { tool_calls: toolCalls(call) } : {}),
          },
          logprobs: null,
          finish_reason: FINISH[generated.finish],
        },
      ],
      usage: usage(call),
    };
  },
  *events(call) {
    const chunk = (delta: Record<string, unknown>, finish: string | null): Record<string, unknown> => ({
      id: call.id,
      object: 'chat.completion.chunk',
      created: call.createdSeconds,
      model: call.model,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    });
    // The first event says only what the call knew before its answer was made.
    yield wire({ data: chunk({ role: 'assistant', content: call.opening.toolCalls ? null : '' }, null) });
    const { generated } = call;
    const finish = FINISH[generated.finish];
    const calls = toolCalls(call);
    if (calls.length > 0) {
      // Each call: its id and name with empty arguments, then its arguments whole; the last one ends the answer.
      for (const [index, { id, function: fn }] of calls.entries()) {
        yield wire({ data: chunk({ tool_calls: [{ index, id, type: 'function', function: { name: fn.name, arguments: '' } }] }, null) });
        const ending = index === calls.length - 1 ? finish : null;
        yield wire({ data: chunk({ tool_calls: [{ index, function: { arguments: fn.arguments } }] }, ending), tokens: generated.toolCalls[index]?.tokens ?? 0 });
      }
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

/** The answer's tool calls as the format writes them: an id stated by the scenario, else made from the call's. */
function toolCalls(call: TextCallView): { id: string; type: 'function'; function: { name: string; arguments: string } }[] {
  const suffix = call.id.slice('svcchat_'.length);
  return call.generated.toolCalls.map((tool, i) => ({
    id: tool.id ?? (i === 0 ? `call_${suffix}` : `call_${suffix}_${i}`),
    type: 'function',
    function: { name: tool.name, arguments: tool.arguments },
  }));
}

/** What match rules read of a Chat Completions-style call. */
function chatView(body: ChatBody, prompt: string[]): TextView {
  const { messages } = body;
  const system = messages.filter((m) => m.role === 'system' || m.role === 'developer').map((m) => textOf(m.content));
  const lastUser = messages.findLast((m) => m.role === 'user');
  const tools = (body.tools ?? []).map((t) => ({ name: t.function.name, ...(t.function.parameters ? { parameters: t.function.parameters } : {}) }));
  const choice = body.tool_choice;
  const format = body.response_format;
  return {
    format: 'chat',
    model: body.model,
    stream: body.stream === true,
    system: system.length > 0 ? system.join('\n') : null,
    messages: prompt,
    lastUser: lastUser ? textOf(lastUser.content) : null,
    tools,
    toolChoice: choice === undefined ? (tools.length > 0 ? 'auto' : 'none') : typeof choice === 'string' ? (choice as 'none' | 'auto' | 'required') : { name: choice.function.name },
    responseFormat: { type: format?.type ?? 'text', name: format?.json_schema?.name ?? null, schema: format?.json_schema?.schema ?? null },
    lastToolResult: lastToolResult(messages),
    assistantTurns: messages.filter((m) => m.role === 'assistant').length,
  };
}

/** The last `tool` message, and the name of the tool whose call (by `tool_call_id`) it answers. */
function lastToolResult(messages: ChatMessage[]): TextView['lastToolResult'] {
  const at = messages.findLastIndex((m) => m.role === 'tool');
  const result = messages[at];
  if (!result) return null;
  let name: string | null = result.name ?? null;
  for (let i = at - 1; i >= 0 && result.tool_call_id !== undefined; i--) {
    const called = (messages[i]?.tool_calls ?? []).find((c) => isRecord(c) && c['id'] === result.tool_call_id);
    if (called === undefined) continue;
    const fn = (called as Record<string, unknown>)['function'];
    if (isRecord(fn) && typeof fn['name'] === 'string') name = fn['name'];
    break;
  }
  return { name, content: textOf(result.content) };
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function usage(call: TextCallView): Record<string, number> {
  const { inputTokens, outputTokens } = call.generated;
  return { prompt_tokens: inputTokens, completion_tokens: outputTokens, total_tokens: inputTokens + outputTokens };
}
