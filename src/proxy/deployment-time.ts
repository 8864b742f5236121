import { controlRequest, emulatorClock } from '../conformance/index.ts';
import type { Admin, DeploymentClock } from '../conformance/index.ts';

/**
 * The deployment's time as the proxy stamps what it sees, in epoch ms. Each stamp errs on the side that finds
 * nothing a client could not have seen: `before` is read before a request goes on (the service handled it no
 * earlier), `after` once something has happened (an answer's headers came, a callback arrived: no later).
 */
export interface DeploymentTime {
  before(): number | Promise<number>;
  after(): number | Promise<number>;
  /** Resolves once the clock has been read a first time, or could not be (and the log says so). */
  ready(): Promise<void>;
}

/** A deployment whose time the proxy knows without asking: real time, or a clock given in-process. */
export function knownTime(now: () => number): DeploymentTime {
  return { before: now, after: now, ready: () => Promise.resolve() };
}

/** Real ms before a control API that could not be read is tried again (stamps keep to the machine's clock till then). */
const RETRY_MS = 2000;

/**
 * The emulator's time read through its control API (GET /_emulator/clock) as the conformance suite reads it
 * (`emulatorClock`: a manual clock gets a thousandth of the wall time gone by, so what came later never gets an
 * equal stamp). Read afresh for each stamp, since the clock may be moved by anyone at any time, but never more
 * than one request at a time: a `before` shares the reading under way (sent before the request arrived, over
 * before it goes on), an `after` shares the one sent next.
 * @see reference "Control API" GET /_emulator/clock
 */
export function controlTime(admin: Admin, options: { timeoutMs: number; wallNow: () => number; log: (line: string) => void }): DeploymentTime {
  let clock: DeploymentClock | null = null;
  let triedMs = -Infinity;
  let warned = false;
  let last = -Infinity;
  let underWay: Promise<number> | null = null;
  let next: Promise<number> | null = null;

  const connect = async (): Promise<DeploymentClock | null> => {
    if (clock !== null || options.wallNow() - triedMs < RETRY_MS) return clock;
    triedMs = options.wallNow();
    // Asked once first to tell a wrong token or address apart: `emulatorClock` takes any failure for the wall clock.
    const problem = await controlRequest(admin, 'GET', '/_emulator/clock', undefined, options.timeoutMs).then(
      (answer) => (answer.status === 200 && typeof (answer.json as { now?: unknown } | undefined)?.now === 'string' ? null : `GET /_emulator/clock answered ${answer.status}`),
      (err: unknown) => (err as Error).message,
    );
    if (problem === null) {
      clock = await emulatorClock(admin, options.timeoutMs).catch(() => null);
      // From now on the deployment's time, which need not follow the machine's stamps used till then.
      if (clock !== null) last = -Infinity;
    } else if (!warned) {
      warned = true;
      options.log(`proxy: the control API at ${admin.url} does not tell the deployment's time (${problem}): stamped with this machine's clock until it does`);
    }
    return clock;
  };

  const reading = (): Promise<number> => {
    const read = (async () => {
      const known = await connect().catch(() => null);
      const at = known ? await known.read() : options.wallNow();
      // `emulatorClock` stamps in increasing order itself; this keeps the order while the machine's clock stands
      // in for it (a control API not read yet), as an equal stamp would leave two exchanges in either order.
      last = Math.max(at, last + 0.001);
      return last;
    })();
    underWay = read;
    void read.finally(() => {
      if (underWay === read) underWay = null;
    });
    return read;
  };

  return {
    before: () => underWay ?? reading(),
    after() {
      if (underWay === null) return reading();
      next ??= underWay.then(() => {
        next = null;
        return reading();
      });
      return next;
    },
    ready: () => connect().then(() => undefined),
  };
}
