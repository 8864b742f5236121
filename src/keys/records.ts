import type { Store } from '../store/index.ts';

/**
 * The nonces signed requests used, per key, each kept until its timestamp's window closes (wall-clock
 * milliseconds, the clock the timestamp is checked on), in the store: a replay is refused after a restart, a
 * kill -9 included, as it is before one.
 *
 * A claim is written by the next transaction that commits, the claiming request's own write included (a
 * `beforeCommit` stamp), so nothing a signed request changes is ever stored without its nonce and a submit or a
 * text call pays no commit of its own for it. A request that answers without writing (a `GET`, a refusal) calls
 * `save` before its answer leaves. A claim is forgotten from memory only once its commit is done: a transaction
 * rolled back leaves it to the next.
 */
export interface NoncesRepo {
  /**
   * Claims `nonce` for `key` until `expiresMs`: false when the key used it in a request whose window is still
   * open at `nowMs` (stored, or claimed and not yet written). A nonce whose window has closed may be claimed again.
   */
  claim(key: string, nonce: string, expiresMs: number, nowMs: number): boolean;
  /** Claims not yet in a committed transaction. */
  readonly unsaved: boolean;
  /** Commits the claims not yet written (outside a transaction; inside one, its commit writes them). */
  save(): void;
  /** Deletes at most `limit` nonces whose window closed at or before `atMs`; returns how many. */
  dropExpired(atMs: number, limit: number): number;
}

interface Claim {
  key: string;
  nonce: string;
  expiresMs: number;
}

export function noncesRepo(store: Store): NoncesRepo {
  const { driver } = store;
  // By `key nonce`: a nonce has no space (visible characters only), so the last space parts the two.
  const unwritten = new Map<string, Claim>();
  const idOf = (key: string, nonce: string): string => `${key} ${nonce}`;

  store.beforeCommit(() => {
    if (unwritten.size === 0) return;
    const written = [...unwritten];
    const upsert = driver.prepare(
      'INSERT INTO nonces (key, nonce, expires_ms) VALUES (?, ?, ?) ON CONFLICT (key, nonce) DO UPDATE SET expires_ms = excluded.expires_ms',
    );
    for (const [, claim] of written) upsert.run(claim.key, claim.nonce, claim.expiresMs);
    store.afterCommit(() => {
      // A claim made again meanwhile (its window closed, the nonce used anew) waits for its own commit.
      for (const [id, claim] of written) if (unwritten.get(id) === claim) unwritten.delete(id);
    });
  });

  return {
    claim(key, nonce, expiresMs, nowMs) {
      const id = idOf(key, nonce);
      const waiting = unwritten.get(id);
      if (waiting !== undefined && waiting.expiresMs > nowMs) return false;
      const stored = driver.prepare('SELECT expires_ms FROM nonces WHERE key = ? AND nonce = ?').get(key, nonce);
      if (stored !== undefined && Number(stored[0]) > nowMs) return false;
      unwritten.set(id, { key, nonce, expiresMs });
      return true;
    },
    get unsaved() {
      return unwritten.size > 0;
    },
    save() {
      if (unwritten.size === 0 || store.inTransaction || store.closed) return;
      // Writes waiting for the next commit (call records) go first and take the claims with them.
      store.flushLater();
      if (unwritten.size > 0) store.transaction(() => undefined);
    },
    dropExpired: (atMs, limit) =>
      driver
        .prepare('DELETE FROM nonces WHERE (key, nonce) IN (SELECT key, nonce FROM nonces WHERE expires_ms <= ? ORDER BY expires_ms LIMIT ?)')
        .run(atMs, limit).changes,
  };
}
