/**
 * One part of a running emulator (the task engine, the callback queue, a cache built from the store...), named,
 * with what it does when the emulator starts, when everything stored has been replaced (a reset, a state
 * import) and when it closes. An emulator is one ordered list of parts: adding a cache is adding one entry.
 */
export interface Part {
  name: string;
  /** At start, once the store is open and holds what the start imported; in list order. */
  start?: () => void;
  /** After a replacement of everything stored has committed; in list order. */
  afterReplace?: () => void;
  /** At close; in reverse list order (a part stops before those it was started after). */
  stop?: () => void | Promise<void>;
}

export interface Lifecycle {
  start(): void;
  afterReplace(): void;
  stop(): Promise<void>;
}

/** The phases of an ordered list of parts. */
export function lifecycleOf(parts: readonly Part[]): Lifecycle {
  return {
    start() {
      for (const part of parts) part.start?.();
    },
    afterReplace() {
      for (const part of parts) part.afterReplace?.();
    },
    async stop() {
      for (const part of [...parts].reverse()) await part.stop?.();
    },
  };
}
