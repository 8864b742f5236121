import type { Exchange } from '../client.ts';
import type { Check, CheckContext } from '../types.ts';
import { errorOf, expectError, needAnswer } from './shared.ts';

/** The text model the text checks call (`--text-model`). */
/**
 * How a Messages call that sent no stop sequences may end, streamed or not (the reference's message_delta:
 * `end_turn` or `max_tokens`); both Messages checks hold answers to this one rule.
 */
const MESSAGE_STOP_REASONS = ['end_turn', 'max_tokens'];

export const textModel = { id: 'svc-text-lite' };

const chat = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  model: textModel.id,
  messages: [{ role: 'user', content: 'Say something short.' }],
  max_tokens: 16,
  ...extra,
});
const json = (e: { data: string }): Record<string, unknown> => JSON.parse(e.data) as Record<string, unknown>;

function expectStream(ctx: CheckContext, res: Exchange): void {
  needAnswer(res);
  ctx.expect((res.headers.get('content-type') ?? '').startsWith('text/event-stream'), 'text/event-stream', res, 'text/event-stream', res.headers.get('content-type'));
  ctx.expect((res.headers.get('cache-control') ?? '').includes('no-cache'), 'Cache-Control: no-cache', res, 'no-cache', res.headers.get('cache-control'));
  ctx.expect(res.headers.get('x-accel-buffering') === 'no', 'X-Accel-Buffering: no', res, 'no', res.headers.get('x-accel-buffering'));
}

/** `names` must appear in this order, `*` marking one that may repeat (at least once). */
function expectOrder(ctx: CheckContext, res: Exchange, got: string[], names: string[]): void {
  let i = 0;
  for (const name of names) {
    const many = name.endsWith('*');
    const bare = many ? name.slice(0, -1) : name;
    const alternatives = bare.split('|');
    ctx.expect(alternatives.includes(got[i] ?? ''), `event ${i} is ${bare}`, res, bare, got[i]);
    i += 1;
    while (many && alternatives.includes(got[i] ?? '')) i += 1;
  }
  ctx.expect(i === got.length, 'nothing after the last event', res, names, got);
}

export const textChecks: Check[] = [
  {
    id: 'text.chat.basic',
    group: 'text',
    title: 'chat completion: svcchat_ id, service model, usage',
    cost: 1,
    async run(ctx) {
      const res = await ctx.api.request('POST', '/v1/chat/completions', { body: chat() });
      needAnswer(res);
      const answer = res.json as { id: string; model: string; usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number } };
      ctx.expect(/^svcchat_/.test(answer.id), 'id svcchat_…', res, 'svcchat_…', answer.id);
      ctx.expect(answer.usage.total_tokens === answer.usage.prompt_tokens + answer.usage.completion_tokens, 'usage adds up', res, 'total = prompt + completion', answer.usage);
    },
  },
  {
    id: 'text.chat.truncation',
    group: 'text',
    title: 'chat completion cut at max_tokens has finish_reason length',
    cost: 1,
    async run(ctx) {
      const res = await ctx.api.request('POST', '/v1/chat/completions', { body: chat({ max_tokens: 1 }) });
      needAnswer(res);
      const choice = (res.json as { choices: { finish_reason: string }[] }).choices[0];
      ctx.expect(choice?.finish_reason === 'length', 'finish_reason length', res, 'length', choice?.finish_reason);
    },
  },
  {
    id: 'text.chat.n',
    group: 'text',
    title: 'n other than 1 is refused',
    cost: 0,
    async run(ctx) {
      const res = await ctx.api.request('POST', '/v1/chat/completions', { body: chat({ n: 2 }) });
      ctx.expect(res.status >= 400 && res.status < 500, 'a 4xx', res, '4xx', res.status);
    },
  },
  {
    id: 'text.chat.stream.order',
    group: 'text',
    title: 'chat stream: role first, content, finish_reason on the last content chunk, usage chunk, [DONE]',
    cost: 1,
    async run(ctx) {
      const res = await ctx.api.request('POST', '/v1/chat/completions', { body: chat({ stream: true, stream_options: { include_usage: true } }) });
      expectStream(ctx, res);
      const events = res.events;
      ctx.expect(events.at(-1)?.data === '[DONE]', 'ends with data: [DONE]', res, '[DONE]', events.at(-1)?.data);
      const chunks = events.slice(0, -1).map(json);
      const validate = ctx.contract.schema('ChatCompletionChunk');
      for (const chunk of chunks) ctx.expect(validate(chunk), 'each chunk is a chat.completion.chunk', res, 'ChatCompletionChunk', chunk);
      const choices = chunks.map((c) => (c['choices'] as { delta: { role?: string; content?: string }; finish_reason: string | null }[])[0]);
      ctx.expect(choices[0]?.delta.role === 'assistant', 'the first chunk has delta.role', res, 'assistant', choices[0]?.delta);
      const usage = chunks.at(-1);
      ctx.expect(Array.isArray(usage?.['choices']) && (usage['choices'] as unknown[]).length === 0 && usage['usage'] !== undefined, 'a last chunk with empty choices and usage', res, 'usage chunk', usage);
      const content = choices.slice(1, -1);
      ctx.expect(content.length > 0 && content.slice(0, -1).every((c) => c?.finish_reason === null) && content.at(-1)?.finish_reason !== null, 'finish_reason on the last content chunk only', res, 'finish_reason last', content.map((c) => c?.finish_reason));
    },
  },
  {
    id: 'text.responses.basic',
    group: 'text',
    title: 'response: svcresp_ id, store false, usage',
    cost: 1,
    async run(ctx) {
      const res = await ctx.api.request('POST', '/v1/responses', { body: { model: textModel.id, input: 'Hello', max_output_tokens: 16 } });
      needAnswer(res);
      const answer = res.json as { id: string; store: boolean };
      ctx.expect(/^svcresp_/.test(answer.id) && answer.store === false, 'svcresp_ id and store false', res, { store: false }, answer);
    },
  },
  {
    id: 'text.responses.unsupported',
    group: 'text',
    title: 'previous_response_id or tools is 422 invalid_params',
    cost: 0,
    async run(ctx) {
      for (const extra of [{ previous_response_id: 'svcresp_x' }, { tools: [] }]) {
        const res = await ctx.api.request('POST', '/v1/responses', { body: { model: textModel.id, input: 'Hello', ...extra } });
        const { code } = errorOf(res);
        ctx.expect(res.status === 422 && code === 'invalid_params', `${Object.keys(extra)[0]} is 422 invalid_params`, res, { status: 422, code: 'invalid_params' }, { status: res.status, code });
      }
    },
  },
  {
    id: 'text.responses.stream.order',
    group: 'text',
    title: 'response stream: the documented event order, each with sequence_number',
    cost: 1,
    async run(ctx) {
      const res = await ctx.api.request('POST', '/v1/responses', { body: { model: textModel.id, input: 'Hello', max_output_tokens: 16, stream: true } });
      expectStream(ctx, res);
      expectOrder(ctx, res, res.events.map((e) => e.event ?? ''), [
        'response.created',
        'response.in_progress',
        'response.output_item.added',
        'response.content_part.added',
        'response.output_text.delta*',
        'response.output_text.done',
        'response.content_part.done',
        'response.output_item.done',
        'response.completed|response.incomplete',
      ]);
      const sequence = res.events.map((e) => json(e)['sequence_number']);
      ctx.expect(sequence.every((n, i) => n === i), 'sequence_number 0, 1, 2, …', res, 'in order', sequence);
    },
  },
  {
    id: 'text.messages.basic',
    group: 'text',
    title: 'message: svcmsg_ id, stop_reason, usage; x-api-key accepted',
    cost: 1,
    async run(ctx) {
      const res = await ctx.api.request('POST', '/v1/messages', {
        body: { model: textModel.id, max_tokens: 16, messages: [{ role: 'user', content: 'Hello' }] },
        headers: { 'x-api-key': ctx.api.key, 'anthropic-version': '2023-06-01' },
      });
      needAnswer(res);
      const answer = res.json as { id: string; stop_reason: string };
      ctx.expect(/^svcmsg_/.test(answer.id), 'svcmsg_ id with x-api-key', res, 'svcmsg_…', answer.id);
      ctx.expect(MESSAGE_STOP_REASONS.includes(answer.stop_reason), 'a stop_reason', res, MESSAGE_STOP_REASONS.join('|'), answer.stop_reason);
      const missing = await ctx.api.request('POST', '/v1/messages', { body: { model: textModel.id, messages: [{ role: 'user', content: 'Hello' }] } });
      expectError(ctx, missing, 422, 'invalid_params');
    },
  },
  {
    id: 'text.messages.stream.order',
    group: 'text',
    title: 'message stream: message_start, content_block_start, ping, deltas, content_block_stop, message_delta, message_stop',
    cost: 1,
    async run(ctx) {
      const res = await ctx.api.request('POST', '/v1/messages', {
        body: { model: textModel.id, max_tokens: 16, stream: true, messages: [{ role: 'user', content: 'Hello' }] },
      });
      expectStream(ctx, res);
      expectOrder(ctx, res, res.events.map((e) => e.event ?? ''), [
        'message_start',
        'content_block_start',
        'ping',
        'content_block_delta*',
        'content_block_stop',
        'message_delta',
        'message_stop',
      ]);
      const delta = json(res.events.at(-2) ?? { data: '{}' })['delta'] as { stop_reason?: string } | undefined;
      ctx.expect(MESSAGE_STOP_REASONS.includes(delta?.stop_reason ?? ''), 'message_delta has stop_reason', res, MESSAGE_STOP_REASONS.join('|'), delta);
    },
  },
];
