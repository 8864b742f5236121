import { expect, it } from 'vitest';
import type { PriceRule } from '../../../src/points/index.ts';
import { checkHistory } from '../../../src/observed/index.ts';
import type { History } from '../../../src/observed/index.ts';
import { checksOf, CONTEXT, read, requestIdsOf, task } from './histories.ts';

const points = (frozen: string, charged: string, refunded: string): { points: Record<string, string> } => ({ points: { frozen, charged, refunded } });
const submit = read('submit', 'req_submit', 0, task('queued'));

it.each<[string, History, string, string[]]>([
  ['a submission answered processing', { tasks: [read('submit', 'req_a', 0, task('processing'))] }, 'lifecycle.submit.queued', ['req_a']],
  ['a submission freezing less than the price', { tasks: [read('submit', 'req_a', 0, task('queued', points('4.000', '0.000', '0.000')))] }, 'billing.freeze.on-submit', ['req_a']],
  ['a submission freezing nothing for a priced model', { tasks: [read('submit', 'req_a', 0, task('queued', points('0.000', '0.000', '0.000')))] }, 'billing.freeze.on-submit', ['req_a']],
  ['a submission already charging', { tasks: [read('submit', 'req_a', 0, task('queued', points('40.000', '40.000', '0.000')))] }, 'billing.freeze.on-submit', ['req_a']],
  ['a freeze that changed between reads', { tasks: [submit, read('get', 'req_a', 3, task('queued', points('41.000', '0.000', '0.000')))] }, 'billing.freeze.unchanged', ['req_a', 'req_submit']],
  ['a processing task already charged', { tasks: [submit, read('get', 'req_a', 10, task('processing', points('40.000', '40.000', '0.000')))] }, 'billing.points.open-until-terminal', ['req_a']],
  ['a failed task that charged', { tasks: [submit, read('get', 'req_a', 22, task('failed', points('40.000', '40.000', '0.000')))] }, 'billing.points.settled', ['req_a']],
  ['a canceled task refunding only part', { tasks: [submit, read('cancel', 'req_a', 2, task('canceled', points('40.000', '0.000', '20.000')))] }, 'billing.points.settled', ['req_a']],
  ['a success refunding more than was frozen', { tasks: [submit, read('get', 'req_a', 22, task('succeeded', points('40.000', '40.000', '41.000')))] }, 'billing.points.settled', ['req_a']],
  ['a negative refund', { tasks: [submit, read('get', 'req_a', 22, task('succeeded', points('40.000', '40.000', '-0.001')))] }, 'billing.points.settled', ['req_a']],
  ['points that changed after the task finished', { tasks: [submit, read('get', 'req_a', 22, task('failed')), read('get', 'req_b', 25, task('failed', points('40.000', '0.000', '0.000')))] }, 'billing.points.settled', ['req_a', 'req_b']],
  ['a balance that moved by more than the freeze', { tasks: [read('submit', 'req_a', 0, task('queued'), { balance: { before: '100.000', after: '50.000' } })] }, 'billing.balance.moves', ['req_a']],
  ['a cancel that refunded nothing to the balance', { tasks: [submit, read('cancel', 'req_a', 2, task('canceled'), { balance: { before: '60.000', after: '60.000' } })] }, 'billing.balance.moves', ['req_a']],
  ['a replay that froze again', { tasks: [submit, read('replay', 'req_a', 2, task('queued'), { balance: { before: '60.000', after: '20.000' } })] }, 'billing.balance.moves', ['req_a']],
])('reports %s', (_name, history, check, requestIds) => {
  const found = checkHistory(history, CONTEXT);
  expect(checksOf(found)).toEqual([check]);
  expect(requestIdsOf(found)).toEqual(requestIds);
});

const video: PriceRule = {
  rule: 'per_second',
  seconds_field: 'duration',
  price_field: 'resolution',
  per_second: { '480p': '97.2', '720p': '237.6', '1080p': '587.5' },
  per_million_output_tokens: { '480p': '6000', '720p': '6400', '1080p': '7000' },
  settle_on_tokens_when_present: 'videos',
};
const avatar: PriceRule = { rule: 'per_second', price_field: 'quality', per_second: { fast: '4', standard: '6', max: '8' }, round_seconds: 'up', estimate_seconds_per_material: 10, material_fields: ['audio', 'voice_audio'] };
const prices = { 'video-gen-2.0-fast': video, 'avatar-photo': avatar };
const videoTask = (status: 'queued' | 'succeeded', charged: string, refunded = '0.000', input: Record<string, unknown> = { mode: 'text', prompt: 'a cat', resolution: '720p', duration: 5 }, output: unknown = { files: [], duration: 5 }): Record<string, unknown> =>
  task(status, { model: 'video-gen-2.0-fast', input, output: status === 'succeeded' ? output : null, ...points('1188.000', status === 'succeeded' ? charged : '0.000', status === 'succeeded' ? refunded : '0.000') });

it.each<[string, Record<string, unknown>, string | null]>([
  ['5 s at 720p charged 1188.000', videoTask('succeeded', '1188.000'), null],
  ['5 s at 720p charged 1187.999', videoTask('succeeded', '1187.999', '0.001'), 'billing.charge.price'],
  ['reference videos settled on 200,000 output tokens at 6400 a million', videoTask('succeeded', '1280.000', '0.000', { mode: 'video', prompt: 'x', resolution: '720p', duration: 5, videos: ['file_1'] }, { files: [], usage: { output_tokens: 200_000 } }), null],
  ['reference videos charged the per-second price instead of tokens', videoTask('succeeded', '1188.000', '0.000', { mode: 'video', prompt: 'x', resolution: '720p', duration: 5, videos: ['file_1'] }, { files: [], usage: { output_tokens: 200_000 } }), 'billing.charge.price'],
  ['a standard avatar of 7.2 s charged 8 whole seconds', task('succeeded', { model: 'avatar-photo', input: { image: 'file_1', drive: 'audio', audio: 'file_2', quality: 'standard' }, output: { files: [], duration: 7.2 }, ...points('60.000', '48.000', '12.000') }), null],
  ['a standard avatar of 7.2 s charged 7.2 seconds', task('succeeded', { model: 'avatar-photo', input: { image: 'file_1', drive: 'audio', audio: 'file_2', quality: 'standard' }, output: { files: [], duration: 7.2 }, ...points('60.000', '43.200', '16.800') }), 'billing.charge.price'],
])('judges the charge of %s by the price rule', (_name, succeeded, check) => {
  const found = checkHistory({ tasks: [read('get', 'req_a', 22, succeeded)] }, { prices });
  expect(checksOf(found)).toEqual(check === null ? [] : [check]);
});

it('judges a video freeze of 5 s at 720p as 1188.000 exactly', () => {
  expect(checkHistory({ tasks: [read('submit', 'req_a', 0, videoTask('queued', '0.000'))] }, { prices })).toEqual([]);
  const wrong = task('queued', { model: 'video-gen-2.0-fast', input: { mode: 'text', prompt: 'a cat', resolution: '720p', duration: 5 }, ...points('1188.001', '0.000', '0.000') });
  expect(checksOf(checkHistory({ tasks: [read('submit', 'req_a', 0, wrong)] }, { prices }))).toEqual(['billing.freeze.on-submit']);
});

it('accepts a balance that moved by the settlement while a read was in flight', () => {
  const history: History = { tasks: [submit, read('get', 'req_a', 22, task('failed'), { balance: { before: '60.000', after: '100.000' } })] };
  expect(checkHistory(history, CONTEXT)).toEqual([]);
});
