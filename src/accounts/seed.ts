import { readFileSync } from 'node:fs';
import type { LedgerRepo } from '../billing/index.ts';
import type { AccountsRepo, KeysRepo } from './records.ts';
import type { Random } from '../random/index.ts';
import { createAccount, createKey } from './accounts.ts';

interface Seed {
  accounts: { id: string; points: string; webhook_url?: string | null; webhook_secret?: string; keys: string[] }[];
}

const SEED_FILE = new URL('../../fixtures/seed.json', import.meta.url);

export function readSeed(): Seed {
  return JSON.parse(readFileSync(SEED_FILE, 'utf8')) as Seed;
}

/** Fills an empty store with the demo account and key of fixtures/seed.json (inside the caller's transaction). */
export function seedStore(db: { accounts: AccountsRepo; keys: KeysRepo; ledger: LedgerRepo }, random: Random, nowMs: number, seed: Seed = readSeed()): void {
  for (const spec of seed.accounts) {
    const account = createAccount(db, random, nowMs, {
      id: spec.id,
      points: spec.points,
      webhook_url: spec.webhook_url ?? null,
      ...(spec.webhook_secret ? { webhook_secret: spec.webhook_secret } : {}),
    });
    for (const key of spec.keys) createKey(db, random, nowMs, account.id, key);
  }
}

export const isEmpty = (db: { accounts: AccountsRepo }): boolean => db.accounts.count() === 0;
