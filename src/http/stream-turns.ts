/**
 * The turns a server's streams share: past its first event, a stream goes on in a turn in which no other stream
 * began, so that calls arriving together (200 at once, say) each get their first byte before the streams already
 * running write the rest of theirs. A stream waits at most `MAX_DEFERRED` turns: calls that keep arriving slow
 * the running streams down, never stop them.
 */
export interface StreamTurns {
  /** A stream began in this turn. */
  began(): void;
  /**
   * Resolves in a turn no stream began in (or after `MAX_DEFERRED` turns that each saw one begin), among the
   * first `RELEASED_PER_TURN` waiting.
   */
  next(): Promise<void>;
}

const MAX_DEFERRED = 8;
/**
 * Streams let go on in one quiet turn, the longest waiting first: each writes up to a slice (a few tenths of a
 * millisecond), so a call arriving meanwhile waits for a few of them, not for a slice of every stream running (100
 * streams: 20 ms and more, which was the last first bytes' wait).
 */
const RELEASED_PER_TURN = 3;

export function streamTurns(): StreamTurns {
  let began = 0;
  let deferred = 0;
  const waiting: (() => void)[] = [];
  let ticking = false;
  const tick = (): void => {
    if (began > 0 && deferred < MAX_DEFERRED) {
      began = 0;
      deferred += 1;
      setImmediate(tick);
      return;
    }
    began = 0;
    deferred = 0;
    const released = waiting.splice(0, RELEASED_PER_TURN);
    if (waiting.length > 0) setImmediate(tick);
    else ticking = false;
    for (const resolve of released) resolve();
  };
  return {
    began: () => {
      began += 1;
    },
    next: () =>
      new Promise((resolve) => {
        waiting.push(resolve);
        if (ticking) return;
        ticking = true;
        // setImmediate: after the poll phase, which is where the next requests are read and admitted.
        setImmediate(tick);
      }),
  };
}
