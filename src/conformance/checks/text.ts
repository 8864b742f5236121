import { errorOf } from '../../wire/index.ts';
import type { Exchange } from '../../wire/index.ts';
import type { Check, CheckContext } from '../types.ts';
import { MESSAGE_STOP_REASONS, streamError, streamOrderProblems } from '../stream-order.ts';
import type { StreamFormat, StreamRequest } from '../stream-order.ts';
import { expectError, needAnswer } from './shared.ts';

const chat = (ctx: CheckContext, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  model: ctx.textModel,
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

/**
 * The format's event order (shared with the proxy), failing at its first departure; and, since the suite asks
 * for a whole answer, no error event: a mid-stream error is a documented ending, but not the order under test.
 */
function expectStreamOrder(ctx: CheckContext, res: Exchange, format: StreamFormat, request: StreamRequest): void {
  for (const problem of streamOrderProblems(format, res.events, request)) ctx.expect(false, problem.message, res, problem.expected, problem.actual);
  const error = streamError(format, res.events);
  ctx.expect(error === null, 'no error event', res, 'a whole stream', error);
}

export const textChecks: Check[] = [
  {
    id: 'text.chat.basic',
    group: 'text',
    title: 'chat completion: svcchat_ id, service model, usage',
    cost: 1,
    async run(ctx) {
      const res = await ctx.api.request('POST', '/v1/chat/completions', { body: chat(ctx) });
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
      const res = await ctx.api.request('POST', '/v1/chat/completions', { body: chat(ctx, { max_tokens: 1 }) });
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
      const res = await ctx.api.request('POST', '/v1/chat/completions', { body: chat(ctx, { n: 2 }) });
      ctx.expect(res.status >= 400 && res.status < 500, 'a 4xx', res, '4xx', res.status);
    },
  },
  {
    id: 'text.chat.stream.order',
    group: 'text',
    title: 'chat stream: role first, content, finish_reason on the last content chunk, usage chunk, [DONE]',
    cost: 1,
    async run(ctx) {
      const res = await ctx.api.request('POST', '/v1/chat/completions', { body: chat(ctx, { stream: true, stream_options: { include_usage: true } }) });
      expectStream(ctx, res);
      expectStreamOrder(ctx, res, 'chat', { includeUsage: true });
      const validate = ctx.contract.schema('ChatCompletionChunk');
      for (const chunk of res.events.slice(0, -1).map(json)) ctx.expect(validate(chunk), 'each chunk is a chat.completion.chunk', res, 'ChatCompletionChunk', chunk);
    },
  },
  {
    id: 'text.responses.basic',
    group: 'text',
    title: 'response: svcresp_ id, store false, usage',
    cost: 1,
    async run(ctx) {
      const res = await ctx.api.request('POST', '/v1/responses', { body: { model: ctx.textModel, input: 'Hello', max_output_tokens: 16 } });
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
        const res = await ctx.api.request('POST', '/v1/responses', { body: { model: ctx.textModel, input: 'Hello', ...extra } });
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
      const res = await ctx.api.request('POST', '/v1/responses', { body: { model: ctx.textModel, input: 'Hello', max_output_tokens: 16, stream: true } });
      expectStream(ctx, res);
      expectStreamOrder(ctx, res, 'responses', {});
    },
  },
  {
    id: 'text.messages.basic',
    group: 'text',
    title: 'message: svcmsg_ id, stop_reason, usage; x-api-key accepted',
    cost: 1,
    async run(ctx) {
      const res = await ctx.api.request('POST', '/v1/messages', {
        body: { model: ctx.textModel, max_tokens: 16, messages: [{ role: 'user', content: 'Hello' }] },
        headers: { 'x-api-key': ctx.api.key, 'anthropic-version': '2023-06-01' },
      });
      needAnswer(res);
      const answer = res.json as { id: string; stop_reason: string };
      ctx.expect(/^svcmsg_/.test(answer.id), 'svcmsg_ id with x-api-key', res, 'svcmsg_…', answer.id);
      ctx.expect(MESSAGE_STOP_REASONS.includes(answer.stop_reason), 'a stop_reason', res, MESSAGE_STOP_REASONS.join('|'), answer.stop_reason);
      const missing = await ctx.api.request('POST', '/v1/messages', { body: { model: ctx.textModel, messages: [{ role: 'user', content: 'Hello' }] } });
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
        body: { model: ctx.textModel, max_tokens: 16, stream: true, messages: [{ role: 'user', content: 'Hello' }] },
      });
      expectStream(ctx, res);
      // No stop sequences sent: the stream must have text and stop on end_turn or max_tokens.
      expectStreamOrder(ctx, res, 'messages', { stopSequences: false });
    },
  },
];
