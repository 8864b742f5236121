import { controlRequest } from './setup.ts';
import type { Admin } from './setup.ts';

/**
 * The deployment's time as the suite estimates it, in epoch ms. The behaviour checks compare the times a client
 * saw (when a read went out, when a callback came) with the times the deployment wrote (started_at,
 * webhook-timestamp). A real deployment keeps real time; the emulator's clock is fast-forwarded by the suite, so
 * its time is read through the control API after each advance: a manual clock stands still between advances, a
 * real one (at its speed) moves on from the time read.
 */
export interface DeploymentClock {
  now(): number;
  /**
   * The deployment's time read from it where it can tell (the emulator, even in the middle of an advance, when a
   * callback it sends arrives), else `now()`.
   */
  read(): Promise<number>;
  /** Reads the deployment's clock again (after an advance); nothing without the control API. */
  sync(): Promise<void>;
}

interface ClockAnswer {
  now?: unknown;
  mode?: unknown;
  speed?: unknown;
}

export function wallClock(): DeploymentClock {
  return { now: () => Date.now(), read: () => Promise.resolve(Date.now()), sync: () => Promise.resolve() };
}

/** The emulator's clock through GET /_emulator/clock; a clock it cannot read is taken as the wall clock. */
export async function emulatorClock(admin: Admin, timeoutMs: number): Promise<DeploymentClock> {
  let anchor = { deployment: Date.now(), wall: Date.now(), speed: 1 as number | null };
  let last = -Infinity;
  /**
   * Whole seconds on the wire: within a second of the truth, as the checks' skew allows. A manual clock still gets
   * a thousandth of the wall time gone by, and every stamp is later than the one before (a new reading anchors
   * anew), so that what happened later is never stamped the same or earlier (a GET sent before an advance, a
   * callback that came during it).
   */
  const now = (): number => {
    last = Math.max(anchor.deployment + (Date.now() - anchor.wall) * (anchor.speed ?? 0.001), last + 0.001);
    return last;
  };
  const sync = async (): Promise<void> => {
    const answer = await controlRequest(admin, 'GET', '/_emulator/clock', undefined, timeoutMs);
    const clock = (answer.json ?? {}) as ClockAnswer;
    const deployment = typeof clock.now === 'string' ? Date.parse(clock.now) : NaN;
    if (answer.status !== 200 || Number.isNaN(deployment)) return;
    const speed = clock.mode === 'manual' ? null : typeof clock.speed === 'number' && clock.speed > 0 ? clock.speed : 1;
    anchor = { deployment, wall: Date.now(), speed };
  };
  await sync().catch(() => undefined);
  return {
    now,
    async read() {
      await sync().catch(() => undefined);
      return now();
    },
    sync,
  };
}
