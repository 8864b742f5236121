import Big from 'big.js';
import { CheckSkipped } from '../client.ts';
import type { Check, CheckContext } from '../types.ts';
import type { Exchange } from '../../wire/index.ts';
import { body, scenario, submitAndCancel } from './shared.ts';
import type { TaskBody } from './shared.ts';
import { runToSuccess } from './to-success.ts';

/**
 * The reference's price tables, written down from it here rather than read from the document's `x-pricing`, so
 * that a document (and so an emulator) with a wrong price fails too.
 * @see reference "Model: video-gen-2.0-fast" Price, "Model: avatar-photo" Price
 */
export const VIDEO_PRICES = {
  '480p': { perSecond: '97.2', perMillionTokens: '6000' },
  '720p': { perSecond: '237.6', perMillionTokens: '6400' },
  '1080p': { perSecond: '587.5', perMillionTokens: '7000' },
} as const;
export const AVATAR_PRICES = { fast: '4', standard: '6', max: '8' } as const;
/** "The freeze estimates each audio or video material at 10 seconds." */
const AVATAR_ESTIMATE_SECONDS = 10;

type Resolution = keyof typeof VIDEO_PRICES;
type Quality = keyof typeof AVATAR_PRICES;
const RESOLUTIONS = Object.keys(VIDEO_PRICES) as Resolution[];
const QUALITIES = Object.keys(AVATAR_PRICES) as Quality[];
const QUEUED = scenario('timeout-in-queue');
const points = (value: Big.BigSource): string => new Big(value).toFixed(3);

const video = (resolution: Resolution, input: Record<string, unknown> = {}): Record<string, unknown> => ({
  model: 'video-gen-2.0-fast',
  input: { prompt: 'conformance: a paper boat on a pond', resolution, duration: 4, ...input },
});
const avatar = (quality: Quality): Record<string, unknown> => ({
  model: 'avatar-photo',
  input: { image: 'https://cdn.example.com/conformance/portrait.jpg', audio: 'https://cdn.example.com/conformance/speech.mp3', quality },
});

/** A task submitted and canceled at once: the freeze as the price table says, refunded in full. */
function freezeCheck(id: string, title: string, payload: Record<string, unknown>, frozen: string): Check {
  return {
    id,
    group: 'billing',
    title,
    cost: Number(frozen),
    async run(ctx) {
      const { submitted, canceled } = await submitAndCancel(ctx, payload, QUEUED);
      ctx.expect(body<TaskBody>(submitted).points.frozen === frozen, `frozen ${frozen}`, submitted, frozen, body<TaskBody>(submitted).points.frozen);
      ctx.expect(body<TaskBody>(canceled).points.refunded === frozen, 'refunded in full on cancel', canceled, frozen, body<TaskBody>(canceled).points.refunded);
    },
  };
}

/** A succeeded task's settlement: `charged`, and what was frozen beyond it refunded (nothing when it was collected). */
function expectSettled(ctx: CheckContext, last: Exchange, task: TaskBody, charged: string, why: string): void {
  ctx.expect(task.points.charged === charged, `charged ${charged} (${why})`, last, charged, task.points.charged);
  const left = new Big(task.points.frozen).minus(charged);
  const refunded = left.lt(0) ? new Big(0) : left;
  ctx.expect(new Big(task.points.refunded).eq(refunded), `refunded ${points(refunded)} (frozen ${task.points.frozen} − charged, never below 0)`, last, points(refunded), task.points.refunded);
}

/** The output tokens a succeeded task reports in output.usage, whose contents the reference leaves "not shown". */
function outputTokens(last: Exchange, task: TaskBody): number {
  const usage = (task.output as { usage?: unknown } | null)?.usage;
  if (typeof usage !== 'object' || usage === null) return Number.NaN;
  const tokens = (usage as { output_tokens?: unknown }).output_tokens;
  if (typeof tokens === 'number' && Number.isInteger(tokens) && tokens >= 0) return tokens;
  throw new CheckSkipped(`task ${task.id} (${last.requestId ?? 'no request id'}) reports no output.usage.output_tokens, whose contents the reference does not show: its per-million price cannot be judged`);
}

export const priceChecks: Check[] = [
  freezeCheck('billing.freeze.video-1080p-5s', 'freezes 2937.500 for 5 s at 1080p (587.5 a second)', video('1080p', { duration: 5 }), '2937.500'),
  freezeCheck('billing.freeze.avatar-fast', 'freezes 40.000 for quality fast (4 a second, the audio estimated at 10 s)', avatar('fast'), '40.000'),
  freezeCheck('billing.freeze.avatar-max', 'freezes 80.000 for quality max (8 a second, the audio estimated at 10 s)', avatar('max'), '80.000'),
  {
    id: 'billing.charge.video-per-second',
    group: 'billing',
    title: 'a succeeded video without reference videos is charged duration × the per-second price of its resolution (480p, 720p and 1080p), nothing refunded',
    cost: RESOLUTIONS.reduce((sum, r) => sum + 4 * Number(VIDEO_PRICES[r].perSecond), 0),
    needs: ['admin'],
    async run(ctx) {
      const ended = await runToSuccess(ctx, RESOLUTIONS.map((r) => video(r)));
      for (const [i, { task, last }] of ended.entries()) {
        const resolution = RESOLUTIONS[i] ?? '720p';
        const price = VIDEO_PRICES[resolution].perSecond;
        const charge = points(new Big(price).times(4));
        ctx.expect(task.points.frozen === charge, `frozen ${charge} (4 s × ${price} at ${resolution})`, last, charge, task.points.frozen);
        expectSettled(ctx, last, task, charge, `4 s × ${price} at ${resolution}`);
      }
    },
  },
  {
    id: 'billing.charge.video-per-token',
    group: 'billing',
    title: "a succeeded video with a reference video is charged its output tokens × the per-million price of its resolution (480p, 720p and 1080p), the difference from the freeze refunded or collected",
    cost: RESOLUTIONS.reduce((sum, r) => sum + 8 * Number(VIDEO_PRICES[r].perSecond), 0),
    needs: ['admin'],
    async run(ctx) {
      const reference = { mode: 'video', videos: ['https://cdn.example.com/conformance/reference.mp4'] };
      const ended = await runToSuccess(ctx, RESOLUTIONS.map((r) => video(r, reference)));
      for (const [i, { task, last }] of ended.entries()) {
        const resolution = RESOLUTIONS[i] ?? '720p';
        const price = VIDEO_PRICES[resolution].perMillionTokens;
        const tokens = outputTokens(last, task);
        ctx.expect(!Number.isNaN(tokens), 'output.usage reports the actual usage (it is settled on tokens)', last, 'an object', (task.output as { usage?: unknown } | null)?.usage);
        const exact = new Big(tokens).times(price).div(1_000_000);
        // How points round is not stated: the charge may be either three-decimal neighbour of the exact amount.
        const off = new Big(task.points.charged).minus(exact).abs();
        const why = `${tokens} output tokens × ${price} per million at ${resolution}`;
        ctx.expect(off.lt('0.001'), `charged ${exact.toString()} to the thousandth (${why})`, last, points(exact), task.points.charged);
        expectSettled(ctx, last, task, task.points.charged, why);
      }
    },
  },
  {
    id: 'billing.charge.avatar-qualities',
    group: 'billing',
    title: 'a succeeded avatar video is charged its seconds, rounded up, × the per-second price of its quality (fast, standard and max), the rest of the freeze refunded',
    cost: QUALITIES.reduce((sum, q) => sum + AVATAR_ESTIMATE_SECONDS * Number(AVATAR_PRICES[q]), 0),
    needs: ['admin'],
    async run(ctx) {
      const ended = await runToSuccess(ctx, QUALITIES.map((q) => avatar(q)));
      for (const [i, { task, last }] of ended.entries()) {
        const quality = QUALITIES[i] ?? 'standard';
        const price = AVATAR_PRICES[quality];
        const frozen = points(new Big(price).times(AVATAR_ESTIMATE_SECONDS));
        ctx.expect(task.points.frozen === frozen, `frozen ${frozen} (10 s estimated × ${price} for ${quality})`, last, frozen, task.points.frozen);
        const seconds = (task.output as { duration?: unknown } | null)?.duration;
        ctx.expect(typeof seconds === 'number' && seconds > 0, 'output.duration gives the actual seconds', last, 'seconds', seconds);
        const charge = points(new Big(Math.ceil(Number(seconds))).times(price));
        expectSettled(ctx, last, task, charge, `${String(seconds)} s rounded up × ${price} for ${quality}`);
      }
    },
  },
];
