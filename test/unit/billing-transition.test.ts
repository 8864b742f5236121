import Big from 'big.js';
import { describe, expect, it } from 'vitest';
import { createAccount, move } from '../../src/accounts/index.ts';
import { applyMovement } from '../../src/billing/index.ts';
import { chargeFor } from '../../src/points/index.ts';
import type { PriceRule } from '../../src/points/index.ts';
import { repositories } from '../../src/db.ts';
import { createRandom } from '../../src/random/index.ts';
import { checkStore, openStore } from '../../src/store/index.ts';
import { transition } from '../../src/tasks/index.ts';
import type { Task } from '../../src/tasks/index.ts';

/**
 * Settlement as the transition computes it: `frozen` stays what was frozen at submission, `charged` is the
 * settlement, `refunded = max(0, frozen − charged)`, and a charge beyond the freeze is collected from available
 * as a `collect` entry of its own. For a terminal task: charged − collected + refunded = frozen.
 * @see reference "States and transitions", "Model: video-gen-2.0-fast" Rules (refunded or collected afterward)
 */

const processing = (frozen: string): Task => ({
  id: 'T261123090000ABCDEF',
  object: 'task',
  model: 'video-gen-2.0-fast',
  status: 'processing',
  created_at: '2026-11-23T09:00:00+08:00',
  started_at: '2026-11-23T09:00:00+08:00',
  finished_at: null,
  input: {},
  points: { frozen, charged: '0.000', refunded: '0.000' },
  output: null,
  error: null,
  metadata: {},
});
const NOW = Date.parse('2026-11-23T09:01:00+08:00');

describe('settlement of a succeeded task', () => {
  it.each([
    ['below the freeze', '1188.000', '640.000', { frozen: '1188.000', charged: '640.000', refunded: '548.000' }, [['charge', '640.000'], ['refund', '548.000']]],
    ['exactly the freeze', '40.000', '40.000', { frozen: '40.000', charged: '40.000', refunded: '0.000' }, [['charge', '40.000']]],
    ['beyond the freeze', '486.000', '583.200', { frozen: '486.000', charged: '583.200', refunded: '0.000' }, [['charge', '486.000'], ['collect', '97.200']]],
    ['nothing', '60.000', '0.000', { frozen: '60.000', charged: '0.000', refunded: '60.000' }, [['refund', '60.000']]],
  ])('charged %s: frozen unchanged, the freeze released by charge and refund', (_what, frozen, charge, points, movements) => {
    const next = transition(processing(frozen), { type: 'succeed', output: { files: [] }, charge }, NOW);
    expect(next.task.points).toEqual(points);
    expect(next.movements.map((m) => [m.kind, m.points])).toEqual(movements);
    // charged − collected + refunded = frozen; and the freeze is released exactly (charge + refund = frozen).
    const of = (kind: string): Big => next.movements.filter((m) => m.kind === kind).reduce((s, m) => s.plus(m.points), new Big(0));
    expect(new Big(points.charged).minus(of('collect')).plus(points.refunded).eq(frozen)).toBe(true);
    expect(of('charge').plus(of('refund')).eq(frozen)).toBe(true);
    expect(of('charge').plus(of('collect')).eq(points.charged)).toBe(true);
  });

  it('failure and cancel still refund the freeze in full, with nothing collected', () => {
    const failed = transition(processing('486.000'), { type: 'fail', code: 'timeout' }, NOW);
    expect(failed.task.points).toEqual({ frozen: '486.000', charged: '0.000', refunded: '486.000' });
    expect(failed.movements).toEqual([{ kind: 'refund', points: '486.000' }]);
  });
});

describe('the collect movement', () => {
  it('moves points from available to charged and may take available below zero', () => {
    const after = applyMovement({ available: '50.000', frozen: '0.000', charged: '486.000' }, 'collect', '97.200');
    expect(after).toEqual({ available: '-47.200', frozen: '0.000', charged: '583.200' });
  });

  it('a freeze beyond available is still refused', () => {
    expect(() => applyMovement({ available: '50.000', frozen: '0.000', charged: '0.000' }, 'freeze', '97.200')).toThrow(
      /97\.200 points; 50\.000 are available/,
    );
  });

  it('keeps funded = available + frozen + charged, and the store check agrees with the ledger', () => {
    const store = openStore({});
    try {
      const db = repositories(store);
      store.transaction(() => {
        createAccount(db, createRandom('billing'), 0, { id: 'acct_b', points: '500.000' });
        const task = { taskId: 'T261123090000ABCDEF', atMs: 0 };
        move(db, 'acct_b', { kind: 'freeze', points: '388.800', ...task });
        move(db, 'acct_b', { kind: 'charge', points: '388.800', ...task });
        move(db, 'acct_b', { kind: 'collect', points: '211.200', ...task });
      });
      expect(db.accounts.get('acct_b')).toMatchObject({ available: '-100.000', frozen: '0.000', charged: '600.000' });
      expect(db.ledger.sums().get('acct_b')).toEqual({ fund: 500000n, freeze: 388800n, charge: 388800n, refund: 0n, collect: 211200n });
      expect(checkStore(store.driver)).toEqual([]);
    } finally {
      store.close();
    }
  });
});

describe('avatar-photo charge', () => {
  const avatar: PriceRule = {
    rule: 'per_second',
    price_field: 'quality',
    per_second: { fast: '4', standard: '6', max: '8' },
    estimate_seconds_per_material: 10,
    material_fields: ['audio', 'voice_audio'],
    round_seconds: 'up',
  };
  it.each([
    [7.2, 'standard', '48.000'],
    [8, 'standard', '48.000'],
    [12.2, 'fast', '52.000'],
    [0.1, 'max', '8.000'],
  ])('bills %f actual seconds rounded up (%s: %s)', (seconds, quality, points) => {
    expect(chargeFor(avatar, { quality, audio: 'file_1' }, { seconds })).toBe(points);
  });
});
