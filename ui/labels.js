// Callback attempts in words that tell the truth: a forged or stale delivery turned away is what a correct receiver
// does, not a failure, and one taken is the receiver's fault; and the two clocks an attempt carries, named.
import { duration, h, isoAt, time, zoneOf } from './dom.js';

/** The attempts sent to be turned away (a callback fault, the verdict's probe): a correct receiver answers non-2xx. */
export const TRIAL_KINDS = { forged_signature: 'forged signature', stale_timestamp: 'stale timestamp' };
const isTrial = (kind) => Object.hasOwn(TRIAL_KINDS, kind);

/**
 * What an attempt's answer means: `ok`, `failed`, `refused` (a trial turned away, as it should be) or `accepted` (a
 * trial taken: the receiver's fault). A trial no one answered says nothing of the receiver's checks: `failed`.
 */
export function outcomeOf(attempt) {
  if (!isTrial(attempt.kind)) return attempt.ok ? 'ok' : 'failed';
  if (attempt.ok) return 'accepted';
  return attempt.status_code !== null ? 'refused' : 'failed';
}

/**
 * A trial message's outcome (every attempt of it forged or stale: the emulator lists one refused as `failed`), or
 * null for any other message, which its status says. One forgery taken among refusals is still taken.
 */
export function trialOutcome(delivery) {
  const { attempts } = delivery;
  if (attempts.length === 0 || !attempts.every((a) => isTrial(a.kind))) return null;
  const outcomes = attempts.map(outcomeOf);
  return { outcome: outcomes.includes('accepted') ? 'accepted' : outcomes.at(-1), kind: attempts.at(-1).kind };
}

/** A table row's class for an outcome: failures and trials taken in red, trials refused apart. */
export const rowClass = (outcome) => ({ ok: 'ok', failed: 'not-ok', refused: 'expected', accepted: 'not-ok accepted' })[outcome];

const BADGES = {
  refused: ['badge-expected', 'refused, as it should', (what) => `A correct receiver turns a delivery with a ${what} away with a non-2xx status: this is not a failure.`],
  accepted: ['badge-problem', 'accepted: should have been refused', (what) => `The receiver took a delivery with a ${what}: it must answer such a delivery with a non-2xx status.`],
};

/** `refused, as it should (forged signature)`, or `accepted: should have been refused (…)`; null for other outcomes. */
export function outcomeLabel(outcome, kind) {
  const badge = BADGES[outcome];
  if (!badge || !isTrial(kind)) return null;
  const what = TRIAL_KINDS[kind];
  return h('span', { className: 'outcome' }, h('span', { className: `badge ${badge[0]}`, title: badge[2](what) }, badge[1]), ` (${what})`);
}

/** A long span in words: days past two of them (a virtual clock may be months from the real one). */
const span = (s) => (s < 172800 ? duration(s) : `${Math.round(s / 86400)} days`);

/**
 * The webhook-timestamp header an attempt sent: its Unix seconds, the time they are in the emulator's zone, and
 * which clock that is. With --webhook-timestamps virtual it is the second the attempt's virtual time falls in; so
 * one off that second is real time. A stale probe's is set back on purpose, from either clock.
 */
export function webhookClock(attempt) {
  const ts = attempt.webhook_timestamp;
  const sentAt = Math.floor(Date.parse(attempt.at) / 1000);
  if (typeof ts !== 'number' || !Number.isFinite(sentAt)) return '–';
  const apart = ts - sentAt;
  const note =
    attempt.kind === 'stale_timestamp'
      ? 'stale on purpose: set back from the time of the send'
      : apart === 0
        ? 'the same second as the emulator clock'
        : `real time: ${span(Math.abs(apart))} ${apart < 0 ? 'behind' : 'ahead of'} the emulator clock`;
  return [h('code', {}, String(ts)), ' = ', time(isoAt(ts * 1000, zoneOf(attempt.at))), h('br'), h('span', { className: 'hint' }, note)];
}

/** Said once above each table of attempts, where the two clocks meet. */
export const TWO_CLOCKS =
  'Two clocks meet here. Sent at is the emulator clock: virtual time, which moves only as the clock is advanced or ' +
  'runs. webhook-timestamp is the header a receiver checks against its own clock, in Unix seconds: the real time ' +
  'of the send, unless the emulator was started with --webhook-timestamps virtual.';
