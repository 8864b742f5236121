/** Nonces seen per key, kept as long as their timestamp could still be accepted, so a replay is refused. */
export interface NonceCache {
  /** False if the key used this nonce before (within the tolerance); else remembers it. */
  remember(key: string, nonce: string, expiresMs: number, nowMs: number): boolean;
}

export function createNonceCache(): NonceCache {
  const seen = new Map<string, number>();
  let sweptAt = 0;
  return {
    remember(key, nonce, expiresMs, nowMs) {
      if (nowMs - sweptAt > 60_000) {
        for (const [id, until] of seen) if (until <= nowMs) seen.delete(id);
        sweptAt = nowMs;
      }
      const id = `${key} ${nonce}`;
      const until = seen.get(id);
      if (until !== undefined && until > nowMs) return false;
      seen.set(id, expiresMs);
      return true;
    },
  };
}
