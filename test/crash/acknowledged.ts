import Big from 'big.js';

// What the clients were told before each kill: only a whole 200 answer counts. Everything here must be found again
// after a restart; what was in flight at a kill may or may not be.

export interface TestAccount {
  id: string;
  key: string;
  /** Standard Webhooks secret of the account's callbacks. */
  secret: string;
  /** The points it was opened with: its only funding. */
  opening: string;
}

export interface TaskBody {
  model: 'social-notes-data' | 'video-gen-2.0-fast' | 'avatar-photo';
  input: Record<string, unknown>;
}

export interface AckedTask {
  id: string;
  model: string;
  frozen: string;
  createdAt: string;
  accountId: string;
  key: string;
  scenario: string;
  round: number;
  /** Set when it was submitted with an Idempotency-Key: what a replay sends again. */
  idempotency: { key: string; body: TaskBody; headers: Record<string, string> } | null;
}

export interface Acknowledged {
  accounts: TestAccount[];
  tasks: Map<string, AckedTask>;
  /** Tasks a cancel was answered 200 for: canceled for good. */
  canceled: Set<string>;
  /** Tasks any cancel was sent for, answered or not: these may be canceled. */
  cancelSent: Set<string>;
  /** Text calls answered in full, by request id (the call id of their ledger entries). */
  textCalls: Map<string, { accountId: string; round: number }>;
  /** The latest virtual time an advance of the clock answered with (epoch ms). */
  clockMs: number;
}

export const newAcknowledged = (accounts: TestAccount[], clockMs: number): Acknowledged => ({
  accounts,
  tasks: new Map(),
  canceled: new Set(),
  cancelSent: new Set(),
  textCalls: new Map(),
  clockMs,
});

const VIDEO_PER_SECOND: Record<string, string> = { '480p': '97.2', '720p': '237.6' };
const AVATAR_PER_SECOND: Record<string, string> = { fast: '4', standard: '6', max: '8' };

/** Points frozen at submission, by the reference's price tables (no reference videos: settled as frozen). */
export function expectedFreeze(body: TaskBody): string {
  switch (body.model) {
    case 'social-notes-data':
      return '40.000';
    case 'video-gen-2.0-fast':
      return new Big(VIDEO_PER_SECOND[String(body.input['resolution'])] as string).times(Number(body.input['duration'])).toFixed(3);
    case 'avatar-photo':
      return new Big(AVATAR_PER_SECOND[String(body.input['quality'])] as string).times(10).toFixed(3);
  }
}

/** Mulberry32: a tiny seeded generator, so a failing mix of requests and kill moments can be run again. */
export interface Prng {
  int(below: number): number;
  pick<T>(items: readonly T[]): T;
  between(min: number, max: number): number;
}

export function prng(seed: number): Prng {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (below: number): number => Math.floor(next() * below);
  return { int, pick: (items) => items[int(items.length)] as (typeof items)[number], between: (min, max) => min + int(max - min + 1) };
}

/** A task body valid by the model's parameter table, with a price that never needs a settlement correction. */
export function taskBody(rng: Prng, n: number): TaskBody {
  switch (rng.int(3)) {
    case 0:
      return { model: 'social-notes-data', input: { mode: 'note', note: `https://notes.example.com/n/${n}`, agree: true } };
    case 1:
      return {
        model: 'video-gen-2.0-fast',
        input: { prompt: `a paper boat on a river, take ${n}`, resolution: rng.pick(['480p', '720p']), duration: rng.between(4, 8) },
      };
    default:
      return {
        model: 'avatar-photo',
        input: { image: 'https://cdn.example.com/face.jpg', audio: `https://cdn.example.com/speech-${n}.mp3`, quality: rng.pick(['fast', 'standard', 'max']) },
      };
  }
}
