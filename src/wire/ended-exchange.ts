import type { Exchange } from './exchange.ts';

// Here rather than in src/proxy, which makes them: the recording (src/recording) writes them, and with them here it
// needs nothing of the proxy.

/** An exchange the proxy has passed on, as its checks and its recorder see it once it has ended. */
export interface EndedExchange {
  /** In the conformance suite's form, so its checks and curl lines apply as they are. */
  exchange: Exchange;
  /** False when the answer's body was over the cap or in an encoding the checks cannot read. */
  complete: boolean;
  /** The upstream's base address the request went to. */
  upstream: string;
  /** Machine time (ms): the request's arrival, the answer's headers, the answer's last byte. */
  startedMs: number;
  firstByteMs: number;
  endMs: number;
  request: { rawHeaders: string[]; body: Buffer | null };
  /**
   * `decoded`: the body with any content-encoding undone; null when it went over the cap (`truncated`) or is in an
   * encoding the proxy cannot undo.
   */
  response: { statusMessage: string; rawHeaders: string[]; decoded: Buffer | null; truncated: boolean };
  /** The fault the proxy injected into it (`--faults`): the client saw the answer late, slow or cut short. */
  injected?: Injected;
}

/** The fault an exchange went through, for its recording. */
export interface Injected {
  rule: string;
  kind: string;
}
