import type { Check } from '../types.ts';
import { errorOf } from '../../wire/index.ts';
import { notesInput } from './shared.ts';

const TEXT_BODY = { model: 'x', messages: [{ role: 'user', content: 'hi' }] };

export const wireChecks: Check[] = [
  {
    id: 'wire.request-id.every-answer',
    group: 'wire',
    title: 'X-Request-Id on answers and errors, equal to error.request_id',
    cost: 0,
    async run(ctx) {
      await ctx.api.request('GET', '/v1/tasks?limit=1');
      const missing = await ctx.api.request('GET', '/v1/tasks/T000000000000AAAAAA');
      ctx.expect(missing.status === 404, 'an unknown task is 404', missing, 404, missing.status);
      const { code } = errorOf(missing);
      ctx.expect(code === 'not_found', 'error.code not_found', missing, 'not_found', code);
    },
  },
  {
    id: 'wire.auth.missing-key',
    group: 'wire',
    title: 'a request without a key is refused with 401',
    cost: 0,
    async run(ctx) {
      const res = await ctx.api.request('GET', '/v1/tasks', { key: null });
      ctx.expect(res.status === 401, 'answers 401', res, 401, res.status);
    },
  },
  {
    id: 'wire.auth.bad-key',
    group: 'wire',
    title: 'a request with an unknown key is refused with 401 on every endpoint group',
    cost: 0,
    async run(ctx) {
      for (const [path, payload] of [
        ['/v1/tasks', notesInput()],
        ['/v1/chat/completions', TEXT_BODY],
        ['/v1/responses', { model: 'x', input: 'hi' }],
        ['/v1/messages', { ...TEXT_BODY, max_tokens: 5 }],
      ] as const) {
        const res = await ctx.api.request('POST', path, { body: payload, key: 'sk-conformance-not-a-key' });
        ctx.expect(res.status === 401, `${path} answers 401`, res, 401, res.status);
      }
    },
  },
  {
    id: 'wire.error-shape.text',
    group: 'wire',
    title: 'text endpoints answer errors in their own shapes',
    cost: 0,
    async run(ctx) {
      const chat = await ctx.api.request('POST', '/v1/chat/completions', { body: TEXT_BODY, key: 'sk-conformance-not-a-key' });
      const error = (chat.json as { error?: Record<string, unknown> } | undefined)?.error ?? {};
      ctx.expect(error['type'] === error['code'] && 'param' in error, 'chat errors have type = code and param', chat, 'type = code, param', error);
      const messages = await ctx.api.request('POST', '/v1/messages', { body: { ...TEXT_BODY, max_tokens: 5 }, key: 'sk-conformance-not-a-key' });
      const shape = (messages.json ?? {}) as { type?: string; error?: { type?: string; code?: string } };
      ctx.expect(shape.type === 'error' && shape.error?.type === shape.error?.code, 'messages errors are {type: error, error: {type, code}}', messages, 'type error', shape);
    },
  },
  {
    id: 'wire.content-type.json',
    group: 'wire',
    title: 'JSON answers are application/json',
    cost: 0,
    async run(ctx) {
      const res = await ctx.api.request('GET', '/v1/tasks?limit=1');
      ctx.expect((res.headers.get('content-type') ?? '').startsWith('application/json'), 'content type application/json', res, 'application/json', res.headers.get('content-type'));
    },
  },
];
