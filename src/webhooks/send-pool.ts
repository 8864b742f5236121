import { START_DEFAULTS } from '../defaults/index.ts';

/**
 * At most `limit` callback sends at once, so a flood of callbacks (a thousand tasks ending in one advance) cannot
 * exhaust sockets. A send that waits for a slot waits in its own promise: the clock never waits with it.
 */
export interface SendPool {
  /** Runs `send` in a slot; once the pool is closed, a send still waiting for one rejects with `PoolClosed`. */
  run<T>(send: () => Promise<T>): Promise<T>;
  /** No more sends start: a shutdown does not wait for a queue of sends. Those in flight finish. */
  close(): void;
  readonly active: number;
  readonly waiting: number;
}

export const DEFAULT_SEND_CONCURRENCY: number = START_DEFAULTS.webhookConcurrency;

export class PoolClosed extends Error {
  constructor() {
    super('the emulator is shutting down');
  }
}

export function createSendPool(limit: number = DEFAULT_SEND_CONCURRENCY): SendPool {
  if (!(Number.isInteger(limit) && limit > 0)) throw new RangeError('the send pool needs a positive whole number of slots');
  let active = 0;
  let closed = false;
  const queue: ((open: boolean) => void)[] = [];
  const release = (): void => {
    active -= 1;
    queue.shift()?.(true);
  };
  return {
    async run(send) {
      if (active >= limit || closed) {
        const open = closed ? false : await new Promise<boolean>((resolve) => queue.push(resolve));
        if (!open) throw new PoolClosed();
      }
      active += 1;
      try {
        return await send();
      } finally {
        release();
      }
    },
    close() {
      closed = true;
      for (const wake of queue.splice(0)) wake(false);
    },
    get active() {
      return active;
    },
    get waiting() {
      return queue.length;
    },
  };
}
