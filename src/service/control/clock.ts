import { formatTime } from '../../clock/index.ts';
import type { ClockMode } from '../../clock/index.ts';
import { ApiError } from '../../errors/index.ts';
import type { ControlDeps } from './deps.ts';

export interface ClockView {
  now: string;
  mode: ClockMode;
  speed: number;
}

export interface Health {
  status: 'ok' | 'damaged';
  version: string;
  clock: { now: string; mode: ClockMode };
  store?: string;
}

/** The virtual clock from the control API. @see openapi/admin.yaml "Clock" */
export function clockControl({ clock, db, config, status }: Pick<ControlDeps, 'clock' | 'db' | 'config' | 'status'>) {
  // The clock's position is stamped on every write: a write with nothing else to say puts the time answered on
  // disk before the answer, so a restart never resumes before it.
  const stamp = (): void => db.store.transaction(() => undefined);
  return {
    get: (): ClockView => ({ now: formatTime(clock.now()), mode: clock.mode, speed: clock.speed }),
    /** Moves a manual clock on; what falls due on the way runs, in time order. */
    async advance(seconds: number): Promise<{ now: string; mode: ClockMode }> {
      const now = await clock.advanceSeconds(seconds);
      stamp();
      return { now: formatTime(now), mode: clock.mode };
    },
    setSpeed(speed: number): ClockView {
      if (clock.mode !== 'real') {
        throw new ApiError('invalid_params', 'A manual clock has no speed; advance it instead.', [
          { field: 'speed', message: 'applies to a real clock only (this one is manual)' },
        ]);
      }
      clock.setSpeed(speed);
      stamp();
      return { now: formatTime(clock.now()), mode: clock.mode, speed: clock.speed };
    },
    /** 503-worthy (`damaged`) once the background store check has found something wrong. */
    health(): Health {
      const now = { now: formatTime(clock.now()), mode: clock.mode };
      const damage = status.storeDamage;
      if (damage) return { status: 'damaged', version: config.version, clock: now, store: damage };
      return { status: 'ok', version: config.version, clock: now };
    },
  };
}
