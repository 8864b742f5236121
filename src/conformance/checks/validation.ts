import type { Check } from '../types.ts';
import { errorOf } from '../../wire/index.ts';
import { expectError } from './shared.ts';

const notes = (input: Record<string, unknown>): Record<string, unknown> => ({ model: 'social-notes-data', input: { agree: true, ...input } });
const video = (input: Record<string, unknown>): Record<string, unknown> => ({ model: 'video-gen-2.0-fast', input: { prompt: 'p', ...input } });
const avatar = (input: Record<string, unknown>): Record<string, unknown> => ({ model: 'avatar-photo', input: { image: 'https://cdn.example.com/p.jpg', ...input } });

/** Each refused without creating anything: 422 invalid_params naming the field. */
const CASES: [string, Record<string, unknown>, string][] = [
  ['validation.ranges.video-duration-low', video({ duration: 3 }), 'input.duration'],
  ['validation.ranges.video-duration-high', video({ duration: 16 }), 'input.duration'],
  ['validation.enums.video-resolution', video({ resolution: '4k' }), 'input.resolution'],
  ['validation.enums.video-ratio', video({ ratio: '2:1' }), 'input.ratio'],
  ['validation.ranges.notes-page', notes({ mode: 'search', keyword: 'k', page: 51 }), 'input.page'],
  ['validation.lengths.notes-keyword', notes({ mode: 'search', keyword: 'k'.repeat(51) }), 'input.keyword'],
  ['validation.enums.avatar-quality', avatar({ audio: 'https://cdn.example.com/a.mp3', quality: 'ultra' }), 'input.quality'],
  ['validation.combination.notes-search-keyword', notes({ mode: 'search' }), 'input.keyword'],
  ['validation.combination.notes-agree', { model: 'social-notes-data', input: { note: 'n', agree: false } }, 'input.agree'],
  ['validation.combination.video-frames-image', video({ mode: 'frames' }), 'input.image'],
  ['validation.combination.video-mode-video', video({ mode: 'video' }), 'input.videos'],
  ['validation.combination.avatar-drive-text', avatar({ drive: 'text' }), 'input.content'],
  ['validation.metadata.too-many-keys', { ...notes({ note: 'n' }), metadata: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v'])) }, 'metadata'],
];

export const validationChecks: Check[] = [
  ...CASES.map(
    ([id, payload, field]): Check => ({
      id,
      group: 'validation',
      title: `422 invalid_params naming ${field}`,
      cost: 0,
      async run(ctx) {
        expectError(ctx, await ctx.api.request('POST', '/v1/tasks', { body: payload }), 422, 'invalid_params', field);
      },
    }),
  ),
  {
    id: 'validation.model.unknown',
    group: 'validation',
    title: 'an unknown model is 404 model_unavailable',
    cost: 0,
    async run(ctx) {
      expectError(ctx, await ctx.api.request('POST', '/v1/tasks', { body: { model: 'no-such-model-conformance', input: {} } }), 404, 'model_unavailable');
    },
  },
  {
    id: 'validation.text.bad-request',
    group: 'validation',
    title: 'a text body that is not a JSON object is 400 bad_request',
    cost: 0,
    async run(ctx) {
      for (const path of ['/v1/chat/completions', '/v1/responses', '/v1/messages']) {
        for (const raw of ['[1,2]', '{not json']) {
          const res = await ctx.api.request('POST', path, { raw });
          const { code } = errorOf(res);
          ctx.expect(res.status === 400 && code === 'bad_request', `${path} with ${raw} is 400 bad_request`, res, { status: 400, code: 'bad_request' }, { status: res.status, code });
        }
      }
    },
  },
];
